// Compiling a Schedule into the executor core's flat arrays (executor_state.h):
// each rank's op states and successor rows right after its program is
// validated, point-to-point channels, compute chains, and each collective's
// group counter, position and shape, checked before the run.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/interrupt.h"
#include "schedule/identical_replicas.h"
#include "schedule/executor/executor_core.h"
#include "schedule/executor/executor_state.h"
#include "schedule/schedule_validation.h"
#include "schedule/op_names.h"

namespace eppsim {

using namespace executor_detail;

namespace {

// Channel ids of (sender, receiver, tag), ranks read in increasing order: a
// channel is opened (given the next id) by the first op that names it, in rank
// then program order. No table holds every channel: each rank's are found in
// a small table of its own, holding the channels earlier ranks opened towards
// it and those it opens itself, so that a lookup stays in cache (a table of
// every channel missed the cache on nearly every probe once it outgrew it).
class ChannelIndex {
 public:
  explicit ChannelIndex(std::uint32_t ranks) : towards_(ranks) {}

  // Rank r's ops come next; `p2p_ops` of them send or receive.
  void begin_rank(std::uint32_t r, std::uint32_t p2p_ops) {
    rank_ = r;
    std::vector<Key> opened_towards;
    opened_towards.swap(towards_[r]);
    // The rank's entries (those opened towards it, and at most two an op of
    // its own: a message to itself has one for each side) fill at most half of
    // the slots it uses; the table only grows. Each slot names the rank it was
    // written for: the previous ranks' are empty, nothing is cleared.
    std::size_t used = 16;
    while (used < 2 * (opened_towards.size() + 2 * std::size_t{p2p_ops})) used *= 2;
    if (used > slots_.size()) slots_.assign(used, Key{});
    mask_ = used - 1;
    for (const Key& k : opened_towards) insert(k);
  }

  // The channel of an op of the current rank with `peer`, which it sends to
  // (`send`) or receives from.
  std::uint32_t find_or_open(std::uint32_t peer, std::uint32_t tag, bool send) {
    Key& slot = slots_[slot_of(peer, tag, send)];
    if (slot.rank_plus_one == rank_ + 1) return slot.id;
    const std::uint32_t id = opened_++;
    slot = Key{peer, tag, send, id, rank_ + 1};
    if (peer == rank_) {
      insert(Key{peer, tag, !send, id});  // its other side, on this rank too
    } else if (peer > rank_) {
      towards_[peer].push_back(Key{rank_, tag, !send, id});  // as the peer's op will name it
    }
    return id;
  }

 private:
  // An op's view of its channel (the peer, the tag, whether it sends) and the
  // channel's id; in the table, with the rank it was written for, plus one.
  struct Key {
    std::uint32_t peer = 0, tag = 0, send = 0, id = 0, rank_plus_one = 0;
  };

  // The slot of the current rank's entry, or the empty slot where it would go.
  std::size_t slot_of(std::uint32_t peer, std::uint32_t tag, bool send) const {
    // splitmix64's finaliser over the key's three words.
    std::uint64_t h = (std::uint64_t{peer} << 1 | send) ^ (std::uint64_t{tag} * 0x9E3779B97F4A7C15ull);
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    for (std::size_t slot = h & mask_;; slot = (slot + 1) & mask_) {
      const Key& k = slots_[slot];
      if (k.rank_plus_one != rank_ + 1 || (k.peer == peer && k.tag == tag && k.send == send)) return slot;
    }
  }
  void insert(Key key) {
    key.rank_plus_one = rank_ + 1;
    slots_[slot_of(key.peer, key.tag, key.send != 0)] = key;
  }

  std::vector<std::vector<Key>> towards_;  // per rank not yet read: the channels opened towards it
  std::vector<Key> slots_;                 // open addressing; the current rank's use slots 0..mask_
  std::size_t mask_ = 0;
  std::uint32_t rank_ = 0, opened_ = 0;
};

}  // namespace

// A rank issues the collectives it runs on a group in program order when they
// share a stream: then the k-th in program order meets the k-th of every other
// member, and their kinds and sizes are compared here, from the columns
// build() has in cache, rather than as each arrives (its size a cache miss
// each). A group some rank spreads over several streams is checked at arrival;
// that is known only once every rank is read, so a mismatch found earlier is
// kept until then, the first of each group.
struct ExecutorCore::State::CollectiveCounting {
  explicit CollectiveCounting(State& state) : s(state) {
    const auto groups = s.group_offset.size() - 1;
    // Rank -> (group, position) rows, to find positions without a search.
    membership_offset.assign(s.ranks + 1, 0);
    for (auto r : s.group_members) ++membership_offset[r + 1];
    for (std::uint32_t r = 0; r < s.ranks; ++r) membership_offset[r + 1] += membership_offset[r];
    membership.resize(s.group_members.size());
    std::vector<std::uint32_t> fill(membership_offset.begin(), membership_offset.end() - 1);
    for (std::uint32_t g = 0; g < groups; ++g) {
      for (auto i = s.group_offset[g]; i < s.group_offset[g + 1]; ++i) {
        membership[fill[s.group_members[i]]++] = {g, i - s.group_offset[g]};
      }
    }
    position.assign(groups, kNone);
    counter.assign(groups, kNone);
    first.resize(groups);
    mismatch.assign(groups, Mismatch{});
    s.instances_of.assign(groups + 1, Instances{});
  }

  void begin_rank(std::uint32_t r) {
    for (auto m = membership_offset[r]; m < membership_offset[r + 1]; ++m) position[membership[m].first] = membership[m].second;
  }
  void end_rank(std::uint32_t r) {
    for (auto m = membership_offset[r]; m < membership_offset[r + 1]; ++m) {
      position[membership[m].first] = kNone;
      counter[membership[m].first] = kNone;
    }
  }

  // Collective op g of the rank begun, on `group` and `stream`, of `shape`
  // (State::shape_word): its counter.
  std::uint32_t add(std::uint32_t g, std::uint32_t group, std::uint32_t stream, std::uint64_t shape) {
    auto& c = counter[group];
    if (c == kNone) {
      c = static_cast<std::uint32_t>(s.counters.size());
      s.counters.push_back(Counter{group, position[group], 0});
      counter_stream.push_back(stream);
    } else if (counter_stream[c] != stream) {
      s.instances_of[group].shapes_checked_at_arrival = true;
    }
    const auto k = s.counters[c].issued++;
    auto& instances = first[group];
    if (k == instances.size()) {
      instances.push_back(First{g, shape});
    } else if (instances[k].shape != shape && mismatch[group].op == kNone) {
      mismatch[group] = Mismatch{g, k, instances[k].op};
    }
    return c;
  }

  // Every rank read: the first mismatch of a group checked here throws;
  // the instances' tables are laid out.
  void finish() {
    const auto groups = s.group_offset.size() - 1;
    const Mismatch* earliest = nullptr;
    std::uint32_t earliest_group = 0;
    for (std::uint32_t g = 0; g < groups; ++g) {
      const Mismatch& m = mismatch[g];
      if (m.op == kNone || s.instances_of[g].shapes_checked_at_arrival) continue;
      if (earliest == nullptr || m.op < earliest->op) {
        earliest = &m;
        earliest_group = g;
      }
    }
    if (earliest != nullptr) s.throw_shape_mismatch(earliest->k, earliest_group, earliest->op, earliest->other);
    bool any_checked_at_arrival = false;
    for (std::uint32_t g = 0; g < groups; ++g) {
      Instances& of = s.instances_of[g];
      of.size = s.group_size(g);
      s.instances_of[g + 1].first = of.first + static_cast<std::uint32_t>(first[g].size());
      s.instances_of[g + 1].arrival = of.arrival + static_cast<std::uint64_t>(first[g].size()) * of.size;
      any_checked_at_arrival = any_checked_at_arrival || of.shapes_checked_at_arrival;
    }
    s.arrival.assign(s.instances_of[groups].arrival, kNone);
    s.arrived.assign(s.instances_of[groups].first, 0);
    if (any_checked_at_arrival) s.shapes.assign(s.instances_of[groups].first, 0);
    for (Counter& c : s.counters) c.issued = 0;
  }

  State& s;
  std::vector<std::uint32_t> membership_offset;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> membership;
  // Per group, for the rank being read: its position and its counter.
  std::vector<std::uint32_t> position, counter;
  std::vector<std::uint32_t> counter_stream;  // per counter: the stream of its first collective
  struct First {
    std::uint32_t op;
    std::uint64_t shape;
  };
  std::vector<std::vector<First>> first;  // per group and instance: its first member in rank order
  struct Mismatch {
    std::uint32_t op = kNone, k = 0, other = 0;  // op: kNone, none
  };
  std::vector<Mismatch> mismatch;  // per group: its first
};

void ExecutorCore::State::build(ScheduleValidator& validator) {
  ranks = schedule.num_ranks();
  if (matching == Matching::Global && !options.local_ranks.empty()) {
    throw std::invalid_argument("ExecutorOptions::local_ranks needs LocalExecutorHooks");
  }
  if (options.compute_chains && options.record_op_events) {
    throw std::invalid_argument("ExecutorOptions::compute_chains needs record_op_events off");
  }
  local.assign(ranks, matching == Matching::Global || options.local_ranks.empty() ? 1 : 0);
  if (matching == Matching::Local && !options.local_ranks.empty()) {
    for (auto r : options.local_ranks) {
      if (r >= ranks) throw std::invalid_argument(fmt::format("local rank {} out of range (num_ranks {})", r, ranks));
      local[r] = 1;
    }
  }
  // Global op ids are 31-bit (a single-op activity's id sets the 32nd).
  std::uint64_t count = 0;
  rank_offset.assign(ranks + 1, 0);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    count += ops_of(schedule, r).size();
    if (count >= kSingleOpActivity) throw InputError(fmt::format("schedule: more than {} ops", kSingleOpActivity - 1));
    rank_offset[r + 1] = static_cast<std::uint32_t>(count);
  }
  index_rank_blocks();
  const std::size_t n = rank_offset[ranks];
  // Each op's state is written once, as its rank's first pass reaches it:
  // reserved here, not filled with defaults first (a pass over 1.5 GB for
  // epp at 16K GPUs).
  op.reserve(n + 1);
  if (options.record_op_events) {
    span.assign(n, Span{});
  } else {
    streams = static_cast<std::uint32_t>(schedule.stream_names_size());
    stream_start.assign(static_cast<std::size_t>(ranks) * streams, std::numeric_limits<double>::infinity());
  }
  rank_run.assign(ranks, RankRun{});
  peak_time_s.assign(ranks, 0.0);

  // Successor rows (stream successor and dependants, each row in increasing op
  // order), a rank at a time right after its program is validated, while its
  // columns are in cache, with no edge list: a first pass counts each op's
  // successors into its succ_begin, the counts become row starts (an op whose
  // one successor is the next op gets an empty row: OpState::next_only), a
  // second fills the rows through a cursor a row (row_fill).
  std::uint64_t most_edges = 0;  // every op a stream successor, plus the deps
  for (std::uint32_t r = 0; r < ranks; ++r) {
    most_edges += ops_of(schedule, r).size() + static_cast<std::uint64_t>(schedule.programs(static_cast<int>(r)).dep_op_size());
  }
  succ.reserve(std::min<std::uint64_t>(most_edges, kNone));
  // Matching::Global: the second pass also gives every SEND and RECV its
  // channel, and the first every COLLECTIVE its counter.
  const bool global = matching == Matching::Global;
  group_offset.assign(static_cast<std::size_t>(schedule.groups_size()) + 1, 0);
  // A member of a replica simulated through another's (its source is not
  // itself) arrives with its source.
  if (schedule.has_identical_replicas()) source_rank = source_ranks(schedule);
  for (int g = 0; g < schedule.groups_size(); ++g) {
    const auto& members = schedule.groups(g).ranks();
    for (const auto r : members) {
      if (source_rank.empty() || source_rank[r] == r) group_members.push_back(r);
    }
    group_offset[static_cast<std::size_t>(g) + 1] = static_cast<std::uint32_t>(group_members.size());
  }
  std::optional<CollectiveCounting> counting;
  if (global) counting.emplace(*this);
  ChannelIndex channel_index(global ? ranks : 0);
  std::vector<std::uint32_t> last_on_stream(static_cast<std::size_t>(schedule.stream_names_size()));
  // Whether each work recomputes (the validator's constructor checked the
  // phases), read once: a compute op's work may be anywhere among the
  // Schedule's messages, a cache miss an op once the Schedule outgrows the cache.
  std::vector<char> recompute_work(static_cast<std::size_t>(schedule.shared_computes_size()));
  for (int w = 0; w < schedule.shared_computes_size(); ++w) {
    recompute_work[static_cast<std::size_t>(w)] = schedule.shared_computes(w).phase() == proto::RECOMPUTE;
  }
  std::size_t memory_ops = 0, communication_ops = 0;
  std::uint64_t edges = 0;
  std::vector<std::uint32_t> words;     // a rank's executor words
  std::vector<std::uint32_t> row_fill;  // a rank's ops: where the next entry of its row goes
  std::vector<UnequalPair> unequal;  // pairs of different sizes (pair_in_program_order)
  for (std::uint32_t r = 0; r < ranks; ++r) {
    throw_if_interrupted();  // SIGINT or SIGTERM (base/interrupt.h): a rank at a time
    validator.validate_program(r);
    // The program's columns, read directly: entry i of each is op i, and the
    // dependency entries (dep_op ascending, validated) list op dep_op[k]
    // waiting for op dep_on[k].
    const auto& program = schedule.programs(static_cast<int>(r));
    const auto first = rank_offset[r], end = rank_offset[r + 1];
    const std::uint32_t n = end - first;
    const std::uint32_t* stream = program.stream().data();
    const int* code = program.code().data();
    const std::uint32_t* target = program.target().data();
    const std::uint32_t* detail = program.detail().data();
    const std::uint64_t* size = program.size_bytes().data();
    const std::uint32_t* dep_op = program.dep_op().data();
    const std::uint32_t* dep_on = program.dep_on().data();
    const auto deps = static_cast<std::uint32_t>(program.dep_op_size());
    const bool is_local = local[r];
    if (is_local) total += n;
    if (counting) counting->begin_rank(r);
    std::fill(last_on_stream.begin(), last_on_stream.end(), kNone);
    std::array<std::uint32_t, 6> kinds{};  // the rank's ops of each Kind
    for (std::uint32_t i = 0; i < n; ++i) {
      OpState state;
      state.kind = kind_of(code[i]);
      state.stream = static_cast<std::uint8_t>(std::min<std::uint32_t>(stream[i], kStreamInColumn));
      if (state.kind == Kind::Collective) {
        // Its counter; with Matching::Local, its group.
        state.link = counting ? counting->add(first + i, target[i], stream[i], shape_word(detail[i], size[i]))
                              : target[i];
      } else if (state.kind == Kind::Compute) {
        state.recompute = recompute_work[target[i]];  // validate_program checked the index
      } else if (state.kind == Kind::Allocate || state.kind == Kind::Free) {
        state.link = static_cast<std::uint32_t>(std::min<std::uint64_t>(size[i], kNone));  // memory_bytes
      }
      ++kinds[static_cast<std::size_t>(state.kind)];
      auto& previous = last_on_stream[stream[i]];
      if (previous != kNone) {
        ++op[previous].succ_begin;
        state.pending = 1;
      }
      previous = first + i;
      op.push_back(state);
    }
    const auto kinds_of = [&](Kind a, Kind b) { return kinds[static_cast<std::size_t>(a)] + kinds[static_cast<std::size_t>(b)]; };
    const std::uint32_t p2p_ops = kinds_of(Kind::Send, Kind::Recv);
    memory_ops += kinds_of(Kind::Allocate, Kind::Free);
    communication_ops += p2p_ops + kinds[static_cast<std::size_t>(Kind::Collective)];
    OpState* const rank_ops = op.data() + first;
    for (std::uint32_t k = 0; k < deps; ++k) {
      ++rank_ops[dep_on[k]].succ_begin;
      rank_ops[dep_on[k]].next_only |= dep_on[k] + 1 == dep_op[k];  // kept only if it is the one successor
      add_predecessor(first + dep_op[k]);
    }
    row_fill.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      OpState& o = rank_ops[i];
      const auto count = o.succ_begin;
      // Its one successor is the next op, on its stream or through its one
      // dependency: the row leaves it out.
      o.next_only = count == 1 && (o.next_only || (i + 1 < n && stream[i + 1] == stream[i]));
      o.succ_begin = row_fill[i] = static_cast<std::uint32_t>(edges);
      edges += o.next_only ? 0 : count;
    }
    if (edges >= kNone) throw InputError(fmt::format("schedule: more than {} dependencies", kNone - 1));
    succ.resize(edges);
    if (global) channel_index.begin_rank(r, p2p_ops);
    std::fill(last_on_stream.begin(), last_on_stream.end(), kNone);
    for (std::uint32_t i = 0, k = 0, next_dep = deps > 0 ? dep_op[0] : n; i < n; ++i) {
      const auto g = first + i;
      auto& previous = last_on_stream[stream[i]];
      if (previous != kNone && !op[previous].next_only) succ[row_fill[previous - first]++] = g;
      previous = g;
      if (is_local && rank_ops[i].pending == 0) initially_ready.push_back(g);
      for (; next_dep == i; next_dep = ++k < deps ? dep_op[k] : n) {
        if (!rank_ops[dep_on[k]].next_only) succ[row_fill[dep_on[k]]++] = g;
      }
      if (!global || (code[i] != proto::OP_SEND && code[i] != proto::OP_RECV)) continue;
      const bool send = code[i] == proto::OP_SEND;
      const auto channel = channel_index.find_or_open(target[i], detail[i], send);
      if (channel == channels.size()) channels.push_back(Channel{send ? r : target[i], send ? target[i] : r, detail[i]});
      pair_in_program_order(g, channel, stream[i], size[i], unequal);
    }
    // The last op's row ends where the next rank's first begins (op[end], set
    // by the next rank's first pass, or the end of the table below).
    if (options.compute_chains) link_compute_chains(first, end, static_cast<std::uint32_t>(edges));
    if (options.executor_words) {
      words.assign(n, 0);
      options.executor_words(r, words);
      for (std::uint32_t i = 0; i < n; ++i) rank_ops[i].executor_word = words[i];
    }
    if (counting) counting->end_rank(r);
  }
  op.push_back(OpState{});
  op[n].succ_begin = static_cast<std::uint32_t>(edges);
  if (global && finish_pairing(unequal)) {
    // Channels spread over several streams: their ops, found again (opened
    // again in the same order, under the same ids), hold their channel.
    ChannelIndex again(ranks);
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const auto is_p2p = [&](std::uint32_t g) { return op[g].kind == Kind::Send || op[g].kind == Kind::Recv; };
      std::uint32_t p2p_ops = 0;
      for (auto g = rank_offset[r]; g < rank_offset[r + 1]; ++g) p2p_ops += is_p2p(g);
      again.begin_rank(r, p2p_ops);
      for (auto g = rank_offset[r]; g < rank_offset[r + 1]; ++g) {
        if (!is_p2p(g)) continue;
        const OpView o = view(g);
        const auto channel = again.find_or_open(o.peer(), o.tag(), op[g].kind == Kind::Send);
        if (!channels[channel].matched_in_posting_order()) continue;
        op[g].link = channel;
        op[g].matched_in_channel = true;
      }
    }
  }
  // With Matching::Global, each communication op joins a transfer's or a
  // collective's activity, which has a row; reserved once, so that the run
  // neither copies these tables as they grow nor touches pages it will not fill.
  if (global) {
    activity_ops.reserve(communication_ops);
    activity_ranks.reserve(communication_ops);
    activity_begin.reserve(communication_ops + 1);
  }
  if (options.record_memory_samples) samples.reserve(memory_ops);
  if (counting) counting->finish();
}

void ExecutorCore::State::index_rank_blocks() {
  const std::uint32_t n = rank_offset[ranks];
  rank_block_bits = 0;
  while (ranks > 0 && (std::uint64_t{2} << rank_block_bits) * ranks <= n) ++rank_block_bits;
  const std::uint32_t blocks = (n >> rank_block_bits) + 1;
  rank_block.resize(std::size_t{blocks} + 1);
  // The rank of each block's first op: the last rank whose ops begin at or
  // before it (a rank with no ops is passed over). Past the last op, the last rank.
  std::uint32_t r = 0;
  for (std::uint32_t b = 0; b <= blocks; ++b) {
    const std::uint64_t first = std::uint64_t{b} << rank_block_bits;
    while (r + 1 < ranks && rank_offset[r + 1] <= first) ++r;
    rank_block[b] = r;
  }
}

void ExecutorCore::State::pair_in_program_order(std::uint32_t g, std::uint32_t channel, std::uint32_t stream,
                                                 std::uint64_t bytes, std::vector<UnequalPair>& unequal) {
  Channel& c = channels[channel];
  const bool send = op[g].kind == Kind::Send;
  auto& my_stream = send ? c.send_stream : c.recv_stream;
  if (my_stream == kNone) {
    my_stream = stream;
  } else if (my_stream != stream) {
    my_stream = kMixedStreams;
  }
  auto& their_head = send ? c.recv_head : c.send_head;
  if (their_head == kNone) {
    auto& head = send ? c.send_head : c.recv_head;
    auto& tail = send ? c.send_tail : c.recv_tail;
    if (tail == kNone) {
      head = g;
      c.head_bytes = bytes;
    } else {
      op[tail].link = g;
    }
    tail = g;
    return;
  }
  const auto partner = their_head;
  const auto partner_bytes = c.head_bytes;
  their_head = op[partner].link;
  if (their_head == kNone) {
    (send ? c.recv_tail : c.send_tail) = kNone;
  } else {
    c.head_bytes = size_bytes(their_head);
  }
  op[partner].link = g;
  op[g].link = partner;
  if (partner_bytes != bytes) unequal.push_back({send ? SendRecv{g, partner} : SendRecv{partner, g}, channel});
}

bool ExecutorCore::State::finish_pairing(const std::vector<UnequalPair>& unequal) {
  bool posting_order = false;
  for (std::size_t id = 0; id < channels.size(); ++id) {
    Channel& c = channels[id];
    for (auto g = c.send_head != kNone ? c.send_head : c.recv_head; g != kNone;) {
      const auto next = op[g].link;
      op[g].link = kNone;  // waits for a partner that never comes
      g = next;
    }
    c.send_head = c.send_tail = c.recv_head = c.recv_tail = kNone;
    posting_order = posting_order || c.matched_in_posting_order();
  }
  for (const UnequalPair& u : unequal) {
    const Channel& c = channels[u.channel];
    if (!c.matched_in_posting_order()) throw_size_mismatch(u.pair, c.tag);
  }
  if (!posting_order) ChunkedTable<Channel>().swap(channels);
  return posting_order;
}

void ExecutorCore::State::throw_size_mismatch(SendRecv pair, std::uint32_t tag) const {
  const auto s = ref(pair.send), r = ref(pair.recv);
  throw ScheduleMismatch(fmt::format("rank {} op {} sends {} bytes (tag {}) to rank {}, whose op {} receives {} bytes",
                                     s.rank, s.op, size_bytes(pair.send), tag, r.rank, r.op, size_bytes(pair.recv)));
}

void ExecutorCore::State::link_compute_chains(std::uint32_t first, std::uint32_t end, std::uint32_t rows_end) {
  for (auto g = first; g < end; ++g) {
    if (op[g].kind != Kind::Compute) continue;
    const auto row_end = g + 1 < end ? op[g + 1].succ_begin : rows_end;
    if (!op[g].next_only && row_end - op[g].succ_begin != 1) continue;
    const auto next = op[g].next_only ? g + 1 : succ[op[g].succ_begin];
    // Its only predecessor is g: it starts when g ends.
    if (op[next].kind == Kind::Compute && op[next].pending == 1 && op[next].recompute == op[g].recompute) {
      op[g].link = next;
    }
  }
}

void ExecutorCore::State::throw_shape_mismatch(std::uint32_t k, std::uint32_t group, std::uint32_t g,
                                               std::uint32_t other) const {
  const auto me = ref(g), them = ref(other);
  throw ScheduleMismatch(fmt::format(
      "collective {} on group {}: rank {} op {} is a {} of {} bytes, but rank {} op {} is a {} of {} bytes", k, group,
      me.rank, me.op, collective_kind_name(collective_kind(g)), size_bytes(g), them.rank,
      them.op, collective_kind_name(collective_kind(other)), size_bytes(other)));
}

}  // namespace eppsim
