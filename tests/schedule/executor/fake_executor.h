#pragma once
// An executor for the executor core's tests that records what the core hands
// it; the test decides when each activity finishes.
#include <functional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <vector>

#include "schedule/executor/executor_core.h"
#include "schedule/trace_events.h"

namespace eppsim {

inline void PrintTo(const OpRef& ref, std::ostream* os) { *os << "{rank " << ref.rank << ", op " << ref.op << "}"; }

namespace testing {

// What the core handed to the executor, in order.
struct Handed {
  enum What { Compute, Transfer, Collective, Communication } what;
  ActivityId id;
  std::vector<OpRef> ops;
  double now;
};

// What both fakes share: the record of what was handed over, and `on_ready`,
// which, when set, runs after each record (to finish re-entrantly).
struct HandedRecord {
  std::vector<Handed> handed;
  std::function<void(const Handed&)> on_ready;

  void record(Handed h) {
    handed.push_back(h);
    if (on_ready) on_ready(handed.back());
  }
};

// An executor of every rank (as the simulators are) that only records; the
// test decides when activities finish.
class FakeExecutor : public GlobalExecutorHooks, public HandedRecord {
 public:
  void compute_ready(ActivityId id, OpRef op, double now) override { record({Handed::Compute, id, {op}, now}); }
  void transfer_ready(ActivityId id, OpRef send, OpRef recv, double now) override {
    record({Handed::Transfer, id, {send, recv}, now});
  }
  void collective_ready(ActivityId id, std::span<const OpRef> members, double now) override {
    record({Handed::Collective, id, {members.begin(), members.end()}, now});
  }
};

// An executor of its own ranks (as the runtime's are) that only records.
class FakeLocalExecutor : public LocalExecutorHooks, public HandedRecord {
 public:
  void compute_ready(ActivityId id, OpRef op, double now) override { record({Handed::Compute, id, {op}, now}); }
  void communication_ready(ActivityId id, OpRef op, double now) override {
    record({Handed::Communication, id, {op}, now});
  }
};

// The event of op `op` of `rank` in a trace with op events.
inline OpEventRef event(const proto::Trace& trace, std::uint32_t rank, std::uint32_t op) {
  for (const OpEventRef e : events_of(trace)) {
    if (e.rank() == rank && e.op() == op) return e;
  }
  throw std::runtime_error("no event");
}

}  // namespace testing
}  // namespace eppsim
