#include "schedule/executor/executor_core.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/units.h"
#include "schedule/executor/executor_state.h"
#include "schedule/schedule_validation.h"
#include "schedule/program_ops.h"

namespace eppsim {

using namespace executor_detail;

ActivityId ExecutorCore::State::new_activity(std::span<const std::uint32_t> gids, std::span<const OpRef> refs) {
  const auto id = static_cast<ActivityId>(activity_begin.size() - 1);
  activity_ops.insert(activity_ops.end(), gids.begin(), gids.end());
  for (const OpRef ref : refs) activity_ranks.push_back(ref.rank);
  activity_begin.push_back(static_cast<std::uint32_t>(activity_ops.size()));
  return id;
}

inline void ExecutorCore::State::complete(std::uint32_t g, std::uint32_t r, double now) {
  op[g].status = Status::Done;
  if (options.record_op_events) {
    span[g].end_s = now;
  } else {
    // The rank's busy record is asked for before the successors (ops of the
    // same rank) are released, and counted after.
    __builtin_prefetch(&rank_run[r], 1);
  }
  ++done;
  if (op[g].next_only) {
    if (predecessor_done(g + 1)) make_ready(g + 1, r, now);
  } else {
    for (auto k = op[g].succ_begin; k < op[g + 1].succ_begin; ++k) {
      if (predecessor_done(succ[k])) make_ready(succ[k], r, now);
    }
  }
  if (!options.record_op_events) {
    last_end_s = std::max(last_end_s, now);
    count_busy(g, r, now, false);
  }
}

inline void ExecutorCore::State::complete(std::uint32_t g, double now) { complete(g, rank_of(g), now); }

// The chain's ops start and end back to back and count toward the same busy
// figures: the first op's start and the last op's end count for them all.
void ExecutorCore::State::complete_chain(std::uint32_t head, double now) {
  auto g = head;
  for (; op[g].link != kNone; g = op[g].link) {
    op[g].status = Status::Done;
    op[op[g].link].pending = 0;
    ++done;
  }
  complete(g, now);
}

inline void ExecutorCore::State::dispatch(std::uint32_t g, std::uint32_t r, double now) {
  OpState& state = op[g];
  switch (state.kind) {
    case Kind::Allocate:
    case Kind::Free: {
      // It ends as it starts: without op events nothing records its start
      // (it is never running, and it keeps no rank busy).
      if (options.record_op_events) span[g].start_s = now;
      apply_memory(g, r, now);
      complete(g, r, now);
      return;
    }
    case Kind::Compute: {
      state.status = Status::Running;
      const OpRef at = ref(g, r);
      started(g, r, now);
      if (state.link == kNone) return hooks.compute_ready(single_op_activity(g), at, now);
      chain_refs.clear();
      for (auto c = g; c != kNone; c = op[c].link) chain_refs.push_back(ref(c, r));  // one rank's
      options.compute_chains->compute_chain_ready(single_op_activity(g), chain_refs, now);
      return;
    }
    case Kind::Send:
    case Kind::Recv:
    case Kind::Collective:
      if (matching == Matching::Local) {
        state.status = Status::Running;
        const OpRef at = ref(g, r);
        started(g, r, now);
        local_hooks->communication_ready(single_op_activity(g), at, now);
      } else if (state.kind == Kind::Collective) {
        arrive(g, now);
      } else {
        post_p2p(g, r, now);
      }
      return;
  }
}

// Dispatches ready ops in the order they became ready. A hook that finishes an
// activity at once re-enters finish(), which only queues the successors.
void ExecutorCore::State::drain() {
  if (draining) return;
  draining = true;
  struct Reset {
    State& s;
    ~Reset() {
      s.ready.clear();
      s.draining = false;
    }
  } reset{*this};
  for (std::size_t i = 0; i < ready.size(); ++i) dispatch(ready[i].g, ready[i].rank, ready[i].now);
}

void ExecutorCore::State::apply_memory(std::uint32_t g, std::uint32_t r, double now) {
  const auto bytes = memory_bytes(g);
  RankRun& run = rank_run[r];
  if (op[g].kind == Kind::Allocate) {
    run.in_use += bytes;
    if (run.in_use > run.peak) {
      run.peak = run.in_use;
      peak_time_s[r] = now;
    }
  } else {
    if (bytes > run.in_use) {
      throw ScheduleMismatch(fmt::format("rank {} op {} frees {} but only {} are allocated", r, g - rank_offset[r],
                                         format_bytes(Bytes(bytes)), format_bytes(Bytes(run.in_use))));
    }
    run.in_use -= bytes;
  }
  if (options.record_memory_samples) samples.push_back({r, now, run.in_use});
}

void ExecutorCore::State::post_p2p(std::uint32_t g, std::uint32_t r, double now) {
  op[g].status = Status::Posted;
  const bool is_send = op[g].kind == Kind::Send;
  std::uint32_t other;
  if (!op[g].matched_in_channel) {
    other = op[g].link;  // paired before the run: its partner
    if (other == kNone || op[other].status != Status::Posted) return;  // the partner posts later, or never
  } else {
    Channel& c = channels[op[g].link];
    auto& their_head = is_send ? c.recv_head : c.send_head;
    auto& their_tail = is_send ? c.recv_tail : c.send_tail;
    if (their_head == kNone) {
      auto& head = is_send ? c.send_head : c.recv_head;
      auto& tail = is_send ? c.send_tail : c.recv_tail;
      op[g].link = kNone;  // last in the queue
      if (tail == kNone) {
        head = g;
      } else {
        op[tail].link = g;
      }
      tail = g;
      return;
    }
    other = their_head;
    their_head = op[other].link;
    if (their_head == kNone) their_tail = kNone;
    const SendRecv match = is_send ? SendRecv{g, other} : SendRecv{other, g};
    if (size_bytes(match.send) != size_bytes(match.recv)) throw_size_mismatch(match, c.tag);
  }
  const std::uint32_t pair[2] = {is_send ? g : other, is_send ? other : g};
  const OpRef mine = ref(g, r), theirs = ref(other);
  const OpRef refs[2] = {is_send ? mine : theirs, is_send ? theirs : mine};
  for (int i = 0; i < 2; ++i) {
    op[pair[i]].status = Status::Running;
    started(pair[i], refs[i].rank, now);
  }
  const auto id = new_activity(pair, refs);
  global_hooks->transfer_ready(id, refs[0], refs[1], now);
}

void ExecutorCore::State::arrive(std::uint32_t g, double now) {
  OpState& state = op[g];
  state.status = Status::Posted;
  Counter& counter = counters[state.link];
  const Instances& of = instances_of[counter.group];
  const auto k = counter.issued++;
  state.link = of.first + k;  // its instance: the counter is not needed again
  const auto size = of.size;
  const std::span<std::uint32_t> members(arrival.data() + of.arrival + static_cast<std::uint64_t>(k) * size, size);
  if (of.shapes_checked_at_arrival) {
    const std::uint64_t my_shape = shape(g);
    std::uint64_t& first_shape = shapes[state.link];
    if (first_shape == 0) {
      first_shape = my_shape;
    } else if (first_shape != my_shape) {
      // Every member arrived so far has the first's shape: name any of them.
      const auto first = std::find_if(members.begin(), members.end(), [](std::uint32_t m) { return m != kNone; });
      throw_shape_mismatch(k, counter.group, g, *first);
    }
  }
  members[counter.position] = g;
  if (++arrived[state.link] < size) return;
  // Member i is the group's i-th rank.
  const std::uint32_t* ranks = group_members.data() + group_offset[counter.group];
  member_refs.clear();
  for (std::uint32_t i = 0; i < size; ++i) {
    const auto m = members[i];
    op[m].status = Status::Running;
    member_refs.push_back(ref(m, ranks[i]));
    started(m, ranks[i], now);
  }
  const auto id = new_activity(members, member_refs);
  global_hooks->collective_ready(id, member_refs, now);
}

ExecutorCore::ExecutorCore(const proto::Schedule& schedule, GlobalExecutorHooks& hooks, ExecutorOptions options)
    : state_(std::make_unique<State>(schedule, hooks, std::move(options))) {
  ScheduleValidator validator(schedule);
  state_->build(validator);
}

ExecutorCore::ExecutorCore(const proto::Schedule& schedule, LocalExecutorHooks& hooks, ExecutorOptions options)
    : state_(std::make_unique<State>(schedule, hooks, std::move(options))) {
  ScheduleValidator validator(schedule);
  state_->build(validator);
}

ExecutorCore::~ExecutorCore() = default;

void ExecutorCore::start(double now) {
  auto& s = *state_;
  for (const auto g : s.initially_ready) s.make_ready(g, s.rank_of(g), now);
  std::vector<std::uint32_t>().swap(s.initially_ready);
  s.drain();
}

void ExecutorCore::finish(ActivityId id, double now) {
  auto& s = *state_;
  if (!s.known_activity(id)) throw std::logic_error(fmt::format("finish: unknown activity {}", id));
  const auto check_running = [&](std::uint32_t g) {
    if (s.op[g].status != Status::Running) {
      const OpRef at = s.ref(g);
      throw std::logic_error(fmt::format("finish: activity {} (rank {} op {}) is not running", id, at.rank, at.op));
    }
  };
  if (id & State::kSingleOpActivity) {
    const auto g = id & ~State::kSingleOpActivity;
    check_running(g);
    if (s.op[g].kind == Kind::Compute && s.op[g].link != kNone) {
      s.complete_chain(g, now);
    } else {
      s.complete(g, now);
    }
  } else {
    // Indices, not iterators: the hooks called below may add activities. A
    // collective's members are on other ranks, a cache miss each: their states
    // are asked for a few members ahead, and their successor rows once those
    // states are in.
    const auto end = s.activity_begin[id + 1];
    constexpr std::uint32_t kStateAhead = 8, kRowAhead = 4;
    for (auto k = s.activity_begin[id]; k < end; ++k) {
      if (k + kStateAhead < end) __builtin_prefetch(&s.op[s.activity_ops[k + kStateAhead]]);
      if (k + kRowAhead < end) {
        const auto ahead = s.activity_ops[k + kRowAhead];
        __builtin_prefetch(s.succ.data() + s.op[ahead].succ_begin);
        if (!s.span.empty()) __builtin_prefetch(&s.span[ahead], 1);
      }
      check_running(s.activity_ops[k]);
      s.complete(s.activity_ops[k], s.activity_ranks[k], now);
    }
  }
  s.drain();
}

void ExecutorCore::prefetch(ActivityId id) const {
  const auto& s = *state_;
  if (!s.known_activity(id)) return;
  if (id & State::kSingleOpActivity) {
    __builtin_prefetch(&s.op[id & ~State::kSingleOpActivity], 1);
  } else {
    __builtin_prefetch(&s.activity_ops[s.activity_begin[id]]);
  }
}

std::uint32_t ExecutorCore::executor_word(OpRef ref) const {
  const auto& s = *state_;
  return s.op[s.rank_offset[ref.rank] + ref.op].executor_word;
}

proto::Trace ExecutorCore::take_trace(const std::string& engine) {
  auto& s = *state_;
  const auto release = [](auto& table) { std::remove_reference_t<decltype(table)>().swap(table); };
  // Only a trace of op events asks which ops are done (done_op) once `op` is freed.
  if (!s.op.empty() && s.options.record_op_events) {
    s.done_after_run.resize(s.op.size() - 1);
    for (std::size_t g = 0; g + 1 < s.op.size(); ++g) s.done_after_run[g] = s.op[g].status == Status::Done;
  }
  release(s.op);
  release(s.succ);
  release(s.channels);
  release(s.instances_of);
  release(s.arrival);
  release(s.arrived);
  release(s.shapes);
  release(s.counters);
  release(s.activity_begin);
  release(s.activity_ops);
  release(s.activity_ranks);
  release(s.ready);
  release(s.stream_start);
  return trace(engine);
}

bool ExecutorCore::all_done() const { return state_->done == state_->total; }
std::size_t ExecutorCore::ops_done() const { return state_->done; }
std::size_t ExecutorCore::ops_total() const { return state_->total; }

std::span<const std::uint32_t> ExecutorCore::group_ranks(std::uint32_t group) const {
  const auto& s = *state_;
  return {s.group_members.data() + s.group_offset[group], s.group_size(group)};
}

std::vector<OpRef> ExecutorCore::activity_ops(ActivityId id) const {
  const auto& s = *state_;
  std::vector<OpRef> ops;
  if (s.known_activity(id)) s.for_each_op_of(id, [&](std::uint32_t g) { ops.push_back(s.ref(g)); });
  return ops;
}

std::vector<std::uint64_t> ExecutorCore::memory_in_use() const {
  std::vector<std::uint64_t> bytes;
  for (const auto& run : state_->rank_run) bytes.push_back(run.in_use);
  return bytes;
}
std::vector<std::uint64_t> ExecutorCore::memory_peak() const {
  std::vector<std::uint64_t> bytes;
  for (const auto& run : state_->rank_run) bytes.push_back(run.peak);
  return bytes;
}

}  // namespace eppsim
