#pragma once
// The executor core's state (executor_core.h), shared by its source files and
// by nothing else: the schedule compiled into flat arrays, the matching queues,
// memory and the record of what ran. executor_build.cpp compiles the
// schedule into the arrays, executor_core.cpp runs the state machine,
// executor_report.cpp explains a deadlock and writes the trace.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/input_limits.h"
#include "schedule/executor/chunked_table.h"
#include "schedule/executor/executor_core.h"
#include "schedule/executor/huge_page_allocator.h"
#include "schedule/schedule_validation.h"
#include "schedule/executor/simulated_ns.h"
#include "schedule/program_ops.h"
#include "schedule/rank_busy.h"

namespace eppsim {
namespace executor_detail {

enum class Kind : std::uint8_t { Compute, Send, Recv, Collective, Allocate, Free };
// Pending: waits for predecessors. Posted: a send/recv waiting for its peer or
// a collective waiting for its group (Matching::Global). Running: handed to the
// executor. Done: finished.
enum class Status : std::uint8_t { Pending, Posted, Running, Done };

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kMixedStreams = kNone - 1;

inline Kind kind_of(int code) {
  switch (code) {
    case proto::OP_SEND: return Kind::Send;
    case proto::OP_RECV: return Kind::Recv;
    case proto::OP_COLLECTIVE: return Kind::Collective;
    case proto::OP_ALLOCATE: return Kind::Allocate;
    case proto::OP_FREE: return Kind::Free;
    default: return Kind::Compute;  // validation rejects any other code
  }
}
inline Kind kind_of(OpView op) { return kind_of(op.code()); }

// A point-to-point channel (sender, receiver, tag). SEND and RECV match in
// posting order per channel; where a channel's sends are all on one stream,
// and its receives too, each side posts in program order (an op of a stream
// is posted only once the one before it is done), so its k-th send meets its
// k-th receive. The build pairs them so, through these queues (linked through
// OpState::link), and checks their sizes before the run; a channel spread
// over several streams on a side keeps them for the run instead: its unmatched
// posted sends and receives in posting order, linked through OpState::link too.
struct Channel {
  std::uint32_t src, dst, tag;
  std::uint32_t send_head = kNone, send_tail = kNone, recv_head = kNone, recv_tail = kNone;
  // Building: the stream of its sends and of its receives (kNone: none yet;
  // kMixedStreams: several), and the bytes of the op heading its queue.
  std::uint32_t send_stream = kNone, recv_stream = kNone;
  std::uint64_t head_bytes = 0;
  bool matched_in_posting_order() const { return send_stream == kMixedStreams || recv_stream == kMixedStreams; }
};

}  // namespace executor_detail

// The schedule compiled into flat arrays indexed by a global op id (the rank's
// offset + the op's index), so that running it allocates nothing per op. What
// running an op reads and writes sits in one 16-byte OpState, the executor's
// own word included, so that the event loop, which jumps across ranks in time
// order, touches one cache line per op instead of one per table. An op's rank
// is not in it: ops are numbered rank by rank, and rank_of finds it.
struct ExecutorCore::State {
  State(const proto::Schedule& s, GlobalExecutorHooks& h, ExecutorOptions o)
      : schedule(s), hooks(h), global_hooks(&h), matching(Matching::Global), options(std::move(o)) {}
  State(const proto::Schedule& s, LocalExecutorHooks& h, ExecutorOptions o)
      : schedule(s), hooks(h), local_hooks(&h), matching(Matching::Local), options(std::move(o)) {}

  // Who matches communication: the core, for an executor of every rank
  // (GlobalExecutorHooks), or the executor of a process's own ranks (Local).
  enum class Matching : std::uint8_t { Global, Local };

  const proto::Schedule& schedule;
  ExecutorHooks& hooks;
  GlobalExecutorHooks* global_hooks = nullptr;  // the hooks, when Matching::Global
  LocalExecutorHooks* local_hooks = nullptr;    // the hooks, when Matching::Local
  Matching matching;
  ExecutorOptions options;
  std::uint32_t ranks = 0;

  // Per rank.
  std::vector<std::uint32_t> rank_offset;  // ranks + 1
  // The rank of op (b << rank_block_bits), for each block b of ops, and of the
  // first op past the last block: the rank of an op in block b lies between
  // entries b and b + 1 (rank_of). Blocks are no longer than ranks' average
  // program, so the table has at most two entries a rank.
  std::vector<std::uint32_t> rank_block;
  std::uint32_t rank_block_bits = 0;
  void index_rank_blocks();
  std::uint32_t rank_of(std::uint32_t g) const {
    const auto block = g >> rank_block_bits;
    const auto lo = rank_block[block], hi = rank_block[block + 1];
    if (lo == hi) [[likely]] return lo;
    return static_cast<std::uint32_t>(
        std::upper_bound(rank_offset.begin() + lo + 1, rank_offset.begin() + hi + 1, g) - rank_offset.begin() - 1);
  }
  std::vector<char> local;                 // runs on this core
  std::vector<double> peak_time_s;  // when each rank's peak was first reached

  struct OpState {
    std::uint32_t succ_begin = 0;  // its row of succ; the row ends at the next op's succ_begin
    // SEND/RECV: its partner; matched in its channel (matched_in_channel), its
    // channel until it is posted, then, waiting in the channel's queue, the
    // next op posted there. COLLECTIVE: its (rank, group) counter until it is
    // posted, then its instance. COMPUTE, with options.compute_chains: the op
    // it runs back to back with (kNone: none). ALLOCATE/FREE: its bytes, or
    // kNone past 32 bits (memory_bytes).
    std::uint32_t link = executor_detail::kNone;
    std::uint32_t executor_word = 0;  // ExecutorOptions::executor_words
    // Predecessors not yet done; kManyPending: many_pending holds the count.
    std::uint16_t pending = 0;
    executor_detail::Kind kind : 3 = executor_detail::Kind::Compute;
    executor_detail::Status status : 2 = executor_detail::Status::Pending;
    bool recompute : 1 = false;  // COMPUTE: its work's phase is proto::RECOMPUTE
    // SEND/RECV: matched in its channel's queues during the run, not paired
    // before it (Channel).
    bool matched_in_channel : 1 = false;
    // Its one successor is the next op (global id + 1), which its row of succ
    // leaves out (empty): nearly every op of a pipeline's streams.
    bool next_only : 1 = false;
    // Its stream, or kStreamInColumn past 254 streams (read the Schedule's column).
    std::uint8_t stream = 0;
  };
  static_assert(sizeof(OpState) == 16);
  static constexpr std::uint16_t kManyPending = 0xFFFF;
  // The predecessor counts of ops waiting for kManyPending or more others
  // (rare: the count of every other op fits in its state).
  std::unordered_map<std::uint32_t, std::uint32_t> many_pending;
  // Building: one more predecessor for op g.
  void add_predecessor(std::uint32_t g) {
    OpState& o = op[g];
    if (o.pending != kManyPending) {
      if (++o.pending == kManyPending) many_pending[g] = kManyPending;
    } else {
      ++many_pending[g];
    }
  }
  // Running: a predecessor of op g is done; true when it was g's last.
  bool predecessor_done(std::uint32_t g) {
    std::uint16_t& pending = op[g].pending;
    if (pending != kManyPending) [[likely]] return --pending == 0;
    const auto left = --many_pending[g];
    if (left != 0) return false;
    many_pending.erase(g);
    pending = 0;
    return true;
  }
  static constexpr std::uint8_t kStreamInColumn = 255;
  // Per op (global id), and one more whose succ_begin ends the last row.
  OpTable<OpState> op;
  OpTable<std::uint32_t> succ;  // stream successor and dependants, global ids (but OpState::next_only)
  // With op events (options.record_op_events): when each op started and
  // ended, side by side, so that an op's end is written to the cache line its
  // start was.
  struct Span {
    double start_s = 0.0, end_s = 0.0;
  };
  OpTable<Span> span;
  // Per rank, in one cache line: the bytes of memory it has in use and its
  // peak, and, without op events (no per-op record), its busy time counted as
  // its ops start and end.
  struct alignas(64) RankRun {
    RankBusyInTimeOrder counted;
    std::uint64_t in_use = 0, peak = 0;
  };
  static_assert(sizeof(RankRun) == 64);
  std::vector<RankRun> rank_run;
  // Without op events: the start of the op each (rank, stream) runs or ran
  // last (ops of a stream run one at a time), and the last end.
  std::uint32_t streams = 0;
  std::vector<double> stream_start;
  double last_end_s = 0.0;
  // The instant count_busy last converted (NaN: none yet), and its nanoseconds.
  double busy_clock_s = std::numeric_limits<double>::quiet_NaN();
  std::int64_t busy_clock_ns = 0;
  // Once take_trace() has freed `op`, with op events: which ops are done.
  std::vector<bool> done_after_run;

  // Point-to-point channels (executor_detail::Channel): kept for the run only
  // when some channel is matched in posting order.
  ChunkedTable<executor_detail::Channel> channels;

  // Groups (schedule order) and collective instances: the k-th collective of
  // group g is instance instances_of[g].first + k; its row of arrival, at
  // instances_of[g].arrival + k * size, holds each member's op at its position
  // (kNone: not arrived).
  // A group's members that run their own programs (schedule/identical_replicas.h:
  // a rank of a replica simulated through another's arrives with it).
  std::vector<std::uint32_t> group_offset, group_members;
  // Per rank, the rank whose ops it runs (source_ranks); empty: itself.
  std::vector<std::uint32_t> source_rank;
  struct Instances {
    std::uint64_t arrival = 0;
    std::uint32_t first = 0;
    std::uint32_t size = 0;  // the group's
    // Some member spreads the group's collectives over several streams, so
    // their kinds and sizes are compared as they arrive (CollectiveCounting).
    bool shapes_checked_at_arrival = false;
  };
  std::vector<Instances> instances_of;  // per group, and one more past the last instance
  OpTable<std::uint32_t> arrival;
  OpTable<std::uint32_t> arrived;  // per instance: how many members have arrived
  // Per instance of a group whose shapes are checked at arrival, the kind and
  // bytes (shape()) of its first member to arrive (0: none yet); empty when no
  // group's are.
  std::vector<std::uint64_t> shapes;
  // Per (rank, group): the group, the rank's position in it, and how many
  // collectives the rank has posted on it so far.
  struct Counter {
    std::uint32_t group, position, issued;
  };
  std::vector<Counter> counters;

  // Transfers and collectives handed to the executor (Matching::Global): their
  // ops' global ids in activity_ops, a row each. A compute op's activity, or a
  // communication op's with Matching::Local, is the op's global id with
  // kSingleOpActivity set, and has no row.
  static constexpr ActivityId kSingleOpActivity = ActivityId{1} << 31;
  OpTable<std::uint32_t> activity_begin{0};
  OpTable<std::uint32_t> activity_ops;
  OpTable<std::uint32_t> activity_ranks;  // the rank of each op in activity_ops
  // A collective's members as OpRefs, for collective_ready (its hook may
  // finish activities re-entrantly, but then nothing is dispatched until it
  // returns: drain()).
  std::vector<OpRef> member_refs;
  // A compute chain's ops, for compute_chain_ready (the same).
  std::vector<OpRef> chain_refs;

  // Ops of local ranks with no predecessor, in id order, ready at start().
  std::vector<std::uint32_t> initially_ready;
  // Ops that became ready, with their rank and the time they did, dispatched
  // in order.
  struct Ready {
    std::uint32_t g, rank;
    double now;
  };
  std::vector<Ready> ready;
  bool draining = false;

  struct Sample {
    std::uint32_t rank;
    double time_s;
    std::uint64_t bytes;
  };
  std::vector<Sample> samples;
  std::size_t total = 0, done = 0;

  // Op g of rank r as its rank and its index in that rank's program.
  OpRef ref(std::uint32_t g, std::uint32_t r) const { return {r, g - rank_offset[r]}; }
  OpRef ref(std::uint32_t g) const { return ref(g, rank_of(g)); }
  // SEND/RECV/COLLECTIVE/MEMORY: the op's bytes, from its rank's column.
  std::uint64_t size_bytes(std::uint32_t g) const {
    const auto r = ref(g);
    return schedule.programs(static_cast<int>(r.rank)).size_bytes(static_cast<int>(r.op));
  }
  // ALLOCATE/FREE: the op's bytes, kept in its state below 2^32 - 1.
  std::uint64_t memory_bytes(std::uint32_t g) const {
    return op[g].link != executor_detail::kNone ? op[g].link : size_bytes(g);
  }
  std::uint32_t stream_of(std::uint32_t g) const {
    if (op[g].stream != kStreamInColumn) return op[g].stream;
    const auto r = ref(g);
    return schedule.programs(static_cast<int>(r.rank)).stream(static_cast<int>(r.op));
  }
  // Without op events: op g's (rank r, stream) slot of stream_start.
  double& stream_slot(std::uint32_t g, std::uint32_t r) {
    return stream_start[static_cast<std::size_t>(r) * streams + stream_of(g)];
  }
  // A running or posted op's start.
  double start_of(std::uint32_t g) const {
    if (options.record_op_events) return span[g].start_s;
    return stream_start[static_cast<std::size_t>(rank_of(g)) * streams + stream_of(g)];
  }
  // The op in the Schedule.
  OpView view(OpRef r) const { return ops_of(schedule, r.rank)[r.op]; }
  OpView view(std::uint32_t g) const { return view(ref(g)); }
  // A COLLECTIVE op's kind, from its rank's column.
  proto::CollectiveKind collective_kind(std::uint32_t g) const {
    const auto r = ref(g);
    return static_cast<proto::CollectiveKind>(schedule.programs(static_cast<int>(r.rank)).detail(static_cast<int>(r.op)));
  }
  // A COLLECTIVE op's kind and bytes in one nonzero word (bytes are below
  // 2^51, validation's bound, and a kind is never 0).
  static std::uint64_t shape_word(std::uint32_t kind, std::uint64_t bytes) { return std::uint64_t{kind} << 56 | bytes; }
  std::uint64_t shape(std::uint32_t g) const { return shape_word(collective_kind(g), size_bytes(g)); }
  bool done_op(std::uint32_t g) const { return op.empty() ? done_after_run[g] : op[g].status == executor_detail::Status::Done; }
  std::uint32_t group_size(std::uint32_t g) const { return group_offset[g + 1] - group_offset[g]; }

  void build(ScheduleValidator& validator);  // validates each program as it goes
  // Building, with Matching::Global: SEND or RECV g of `bytes` on `stream` joins
  // `channel`, meeting the first op of the other side waiting in its queue, if
  // any; pairs of different sizes are kept in `unequal` until finish_pairing
  // knows whether they really meet.
  struct SendRecv {
    std::uint32_t send, recv;
  };
  struct UnequalPair {
    SendRecv pair;
    std::uint32_t channel;
  };
  void pair_in_program_order(std::uint32_t g, std::uint32_t channel, std::uint32_t stream, std::uint64_t bytes,
                             std::vector<UnequalPair>& unequal);
  // Ops left waiting get no partner; a pair of different sizes that does meet
  // throws ScheduleMismatch. True when some channel is spread over several
  // streams: its ops are matched in posting order during the run instead, and
  // build() gives each its channel.
  bool finish_pairing(const std::vector<UnequalPair>& unequal);
  [[noreturn]] void throw_size_mismatch(SendRecv pair, std::uint32_t tag) const;
  // Building, with Matching::Global: gives each collective its (rank, group)
  // counter and checks each instance's shapes as build() reads each rank's
  // program (executor_build.cpp).
  struct CollectiveCounting;
  [[noreturn]] void throw_shape_mismatch(std::uint32_t k, std::uint32_t group, std::uint32_t g, std::uint32_t other) const;

  // A row of the ops `gids` of ranks refs[i].rank.
  ActivityId new_activity(std::span<const std::uint32_t> gids, std::span<const OpRef> refs);
  static ActivityId single_op_activity(std::uint32_t g) { return kSingleOpActivity | g; }
  // The global ids of an activity's ops (the id must be known: known_activity):
  // a compute op's with those chained after it (options.compute_chains).
  template <typename Visit>
  void for_each_op_of(ActivityId id, Visit&& visit) const {
    if (id & kSingleOpActivity) {
      for (auto g = id & ~kSingleOpActivity; g != executor_detail::kNone;
           g = op[g].kind == executor_detail::Kind::Compute ? op[g].link : executor_detail::kNone) {
        visit(g);
      }
      return;
    }
    for (auto k = activity_begin[id]; k < activity_begin[id + 1]; ++k) visit(activity_ops[k]);
  }
  bool known_activity(ActivityId id) const {
    return id & kSingleOpActivity ? (id & ~kSingleOpActivity) + 1 < op.size() : id + 1 < activity_begin.size();
  }
  void make_ready(std::uint32_t g, std::uint32_t r, double now) { ready.push_back(Ready{g, r, now}); }
  // Op g of rank r starts.
  void started(std::uint32_t g, std::uint32_t r, double now) {
    if (options.record_op_events) {
      span[g].start_s = now;
    } else {
      stream_slot(g, r) = now;
      count_busy(g, r, now, true);
    }
  }
  // Without op events: the start or end of op g of rank r joins r's busy time.
  void count_busy(std::uint32_t g, std::uint32_t r, double now, bool start) {
    const OpState& o = op[g];
    BusySet set = BusySet::Communication;
    switch (o.kind) {
      case executor_detail::Kind::Compute:
        set = o.recompute ? BusySet::Recompute : BusySet::Compute;
        break;
      case executor_detail::Kind::Allocate:
      case executor_detail::Kind::Free: return;
      default: break;
    }
    RankBusyInTimeOrder& counted = rank_run[r].counted;
    // Ops start and end in bursts at one instant: its nanoseconds are worked out once.
    if (now != busy_clock_s) {
      busy_clock_ns = to_ns(now, [&] { return fmt::format("schedule: {} {}", describe(g), start ? "starts" : "ends"); });
      busy_clock_s = now;
    }
    const auto at_ns = busy_clock_ns;
    if (start) {
      counted.start(set, at_ns);
    } else {
      counted.end(set, at_ns);
    }
  }
  // Op g of rank r; inlined into its callers (finish() above all), which it
  // otherwise cost a dozen instructions an op to call.
  [[gnu::always_inline]] inline void complete(std::uint32_t g, std::uint32_t r, double now);
  // The same, op g's rank looked up (executor_core.cpp only, as the above).
  [[gnu::always_inline]] inline void complete(std::uint32_t g, double now);
  // A chain's first op finished with the whole chain: every op done, the last
  // at `now`.
  void complete_chain(std::uint32_t head, double now);
  // With options.compute_chains: links each compute op of the rank whose ops
  // are [first, end) to the op it runs back to back with (OpState::link);
  // `rows_end` ends the last op's successor row.
  void link_compute_chains(std::uint32_t first, std::uint32_t end, std::uint32_t rows_end);
  void drain();
  // Op g of rank r; inlined into drain(), its one caller.
  [[gnu::always_inline]] inline void dispatch(std::uint32_t g, std::uint32_t r, double now);
  void apply_memory(std::uint32_t g, std::uint32_t r, double now);  // op g of rank r
  void post_p2p(std::uint32_t g, std::uint32_t r, double now);  // op g of rank r
  void arrive(std::uint32_t g, double now);

  std::string describe(std::uint32_t g) const;
  std::string p2p_hint(std::uint32_t src, std::uint32_t dst, bool waiting_sender) const;
  std::string blocked_line(std::uint32_t g) const;
};

}  // namespace eppsim
