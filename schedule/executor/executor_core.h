#pragma once
// The executor core: the Schedule's semantics (docs/architecture.md, "The Schedule") in one
// place, shared by every executor: the analytic and flow engines in sim/, the
// runtime's backends in runtime/. An executor supplies time and completion; the
// core decides what may run, matches peers, accounts memory, records the trace
// and explains a deadlock.
//
// Semantics:
//   - An op becomes ready when the previous op on its stream and every op in its
//     deps are done.
//   - MEMORY ops complete the moment they are ready and update the rank's bytes
//     in use (a free of more than is allocated throws ScheduleMismatch).
//   - COMPUTE ops are handed to the executor (ExecutorHooks::compute_ready); the
//     executor calls ExecutorCore::finish when its model (or the hardware) says
//     the op is over.
//   - SEND and RECV match in posting order per (sender, receiver, tag). With
//     GlobalExecutorHooks (simulators), the transfer is handed to the executor when
//     both sides have posted (rendezvous); both ops end when the executor
//     finishes it. Sizes must agree (ScheduleMismatch).
//   - The k-th COLLECTIVE a rank issues on a group meets the k-th of every other
//     member; with GlobalExecutorHooks it is handed to the executor when every
//     member has arrived and ends for all members at once. Kinds and sizes must
//     agree (ScheduleMismatch): checked on construction where every rank issues
//     a group's collectives from one stream (then in program order), else as
//     members arrive.
//   - With LocalExecutorHooks (one process per rank, the runtime), the core runs
//     only the ranks it is given; each SEND, RECV and COLLECTIVE is handed to the
//     executor when it is ready on this rank, and the executor (MPI, NCCL)
//     matches it with the peers and finishes it.
// Communication is asynchronous: the core learns when a transfer may start,
// the executor decides when it ends, so concurrent transfers may share links.
//
// Time is the executor's: seconds since the start of the step, non-decreasing
// across calls. The trace records, per op, when it started (a transfer: when it
// was handed to the executor, so waiting for peers shows as idle) and ended.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "schedule/program_ops.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim {

class ScheduleDeadlock : public std::runtime_error {
 public:
  explicit ScheduleDeadlock(const std::string& message) : std::runtime_error(message) {}
};

class ScheduleMismatch : public std::runtime_error {
 public:
  explicit ScheduleMismatch(const std::string& message) : std::runtime_error(message) {}
};

// An op of the Schedule: rank and index in the rank's program.
struct OpRef {
  std::uint32_t rank = 0;
  std::uint32_t op = 0;
  bool operator==(const OpRef&) const = default;
};

// What an executor is asked to run; the id is what it passes back to finish().
// Opaque to executors (not dense: a compute op's has bit 31 set).
using ActivityId = std::uint32_t;

class ComputeChainHooks;

struct ExecutorOptions {
  // With LocalExecutorHooks: the ranks this process runs (empty = all).
  std::vector<std::uint32_t> local_ranks;
  std::size_t max_blocked_ops_reported = 20;
  // Whether the trace lists every memory sample (Trace.memory: each rank's
  // bytes in use after each ALLOCATE and FREE) or, per rank, one: its peak,
  // at the time it was first reached (a rank that never holds bytes has none),
  // which is all a report reads of them.
  bool record_memory_samples = true;
  // Whether the trace lists every op's event (Trace.op_events) or, per rank,
  // only how long its ops kept it busy (Trace.busy): what a report needs, for
  // runs that write no op-level output. Without events, each rank's ops must
  // start and finish in time order, as a discrete-event simulator runs them
  // (RankBusyInTimeOrder, schedule/rank_busy.h).
  bool record_op_events = true;
  // With op events: the ranks whose events (and memory samples) the trace
  // lists, besides the slowest rank with `trace_slowest_rank` (the rank whose
  // ops end last, the busiest of those). Both unset: every rank. Otherwise
  // the trace names them (Trace.traced_ranks), has every other rank's memory
  // peak as its one sample, and lists every rank's busy figures (Trace.busy),
  // counted from the same spans, so that its report is that of the whole trace.
  std::vector<std::uint32_t> traced_ranks;
  bool trace_slowest_rank = false;
  // Without op events, for an executor whose compute ops take durations known
  // when they start (a simulator without faults or interference): a compute op
  // whose only successor is a compute op waiting for nothing else, of the same
  // kind (recompute or not), runs back to back with it. Such a chain starts as
  // one activity (ComputeChainHooks::compute_chain_ready, on the executor given
  // here) and is finished once, at its last op's end: one event instead of one
  // per op. The busy figures are those of the ops one by one, since the chain's
  // ops touch and count alike. Null: no chains.
  ComputeChainHooks* compute_chains = nullptr;
  // Called for each rank once its program is validated, before the run:
  // `words` (one per op of the rank, in program order, zero) takes the ops'
  // executor words (ExecutorCore::executor_word). Empty: every word is 0.
  std::function<void(std::uint32_t rank, std::span<std::uint32_t> words)> executor_words;
};

// What every executor is asked: when a COMPUTE op may start. An executor is
// one of the two kinds below, which differ in who matches communication.
class ExecutorHooks {
 public:
  virtual ~ExecutorHooks() = default;
  // A COMPUTE op may start now.
  virtual void compute_ready(ActivityId id, OpRef op, double now) = 0;
};

// An executor of every rank in one process (the simulators): the core matches
// transfers and collectives and hands each over once all its sides have arrived.
class GlobalExecutorHooks : public ExecutorHooks {
 public:
  // Both sides of a transfer have posted.
  virtual void transfer_ready(ActivityId id, OpRef send, OpRef recv, double now) = 0;
  // Every member has arrived; `members` in the group's rank order.
  virtual void collective_ready(ActivityId id, std::span<const OpRef> members, double now) = 0;
};

// An executor of one process's own ranks (the runtime, ExecutorOptions::
// local_ranks): each SEND, RECV and COLLECTIVE is handed over when it is ready
// on a local rank, and the executor (MPI, NCCL) matches it with its peers.
class LocalExecutorHooks : public ExecutorHooks {
 public:
  virtual void communication_ready(ActivityId id, OpRef op, double now) = 0;
};

// ExecutorOptions::compute_chains: compute ops that run back to back may start
// now, `ops` in order, each starting when the one before ends; the executor
// finishes the activity when the last ends.
class ComputeChainHooks {
 public:
  virtual ~ComputeChainHooks() = default;
  virtual void compute_chain_ready(ActivityId id, std::span<const OpRef> ops, double now) = 0;
};

class ExecutorCore {
 public:
  // Validates the schedule (schedule/schedule_validation.h). The schedule
  // and the hooks must outlive the core. The kind of hooks decides who
  // matches communication: the core (Global) or the executor (Local).
  ExecutorCore(const proto::Schedule& schedule, GlobalExecutorHooks& hooks, ExecutorOptions options = {});
  ExecutorCore(const proto::Schedule& schedule, LocalExecutorHooks& hooks, ExecutorOptions options = {});
  ~ExecutorCore();
  ExecutorCore(const ExecutorCore&) = delete;
  ExecutorCore& operator=(const ExecutorCore&) = delete;

  // Makes every op without predecessors ready at `now` (calls the hooks).
  void start(double now = 0.0);
  // The executor's activity ended at `now`: its ops are done and their
  // successors become ready (the hooks may be called again, re-entrantly safe).
  void finish(ActivityId id, double now);

  // A hint that `id` will finish soon (the executor's next event): brings its
  // ops' states toward the cache, so that finish() does not wait for them. An
  // unknown id is ignored.
  void prefetch(ActivityId id) const;

  // The word the executor gave an op (ExecutorOptions::executor_words; the
  // analytic engine: which price the op has). It sits beside the op's state,
  // which the core has just read when it calls a hook about the op, so that
  // reading it there costs no cache miss. `ref` must name an op of the
  // Schedule.
  std::uint32_t executor_word(OpRef ref) const;

  bool all_done() const;
  std::size_t ops_done() const;
  std::size_t ops_total() const;
  // Throws ScheduleDeadlock naming the blocked ops and why (no matching receive,
  // a different tag or size posted instead, collective members missing).
  [[noreturn]] void throw_deadlock() const;
  // The ops handed to the executor and not finished, and those waiting for
  // their peers, one line each (at most max_blocked_ops_reported, then a
  // count): what a step stopped mid-way by a simulated fault left unfinished.
  std::vector<std::string> unfinished_ops() const;

  const proto::Schedule& schedule() const;
  OpView op(OpRef ref) const;
  // Ranks of a group, in the order the Schedule lists them.
  std::span<const std::uint32_t> group_ranks(std::uint32_t group) const;
  // The ops an activity covers (one for compute, or a chain's with
  // ExecutorOptions::compute_chains, one with Local matching, two for a
  // transfer, the members for a collective).
  std::vector<OpRef> activity_ops(ActivityId id) const;

  // The trace of everything done so far (complete once all_done()); `engine`
  // names the executor ("analytic", "flow", "cpu", "cuda").
  proto::Trace trace(const std::string& engine) const;
  // trace(), for a run that is over: first frees the tables only running needs
  // (dependencies, matching queues, activities), so that a large step does not
  // hold them and its trace at once. Afterwards only trace(), take_trace(),
  // ops_done(), ops_total(), all_done() and the memory figures may be called.
  proto::Trace take_trace(const std::string& engine);
  // Bytes in use and peak on each rank so far.
  std::vector<std::uint64_t> memory_in_use() const;
  std::vector<std::uint64_t> memory_peak() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace eppsim
