#include "sim/engine/analytic_engine.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/errors.h"
#include "models/units.h"
#include "traces/op_names.h"

namespace eppsim {

void validate_schedule(const proto::Schedule& schedule) {
  const auto ranks = schedule.num_ranks();
  auto fail = [](const std::string& what) { throw InputError("schedule: " + what); };
  if (static_cast<std::uint32_t>(schedule.programs_size()) != ranks) {
    fail(fmt::format("num_ranks is {} but there are {} programs", ranks, schedule.programs_size()));
  }
  if (schedule.placement_size() != 0 && static_cast<std::uint32_t>(schedule.placement_size()) != ranks) {
    fail(fmt::format("num_ranks is {} but there are {} placements", ranks, schedule.placement_size()));
  }
  std::vector<std::vector<char>> member(static_cast<std::size_t>(schedule.groups_size()));
  for (int g = 0; g < schedule.groups_size(); ++g) {
    const auto& group = schedule.groups(g);
    if (group.id() != static_cast<std::uint32_t>(g)) fail(fmt::format("groups[{}].id: must equal its index, got {}", g, group.id()));
    member[g].assign(ranks, 0);
    for (auto r : group.ranks()) {
      if (r >= ranks) fail(fmt::format("groups[{}]: rank {} out of range (num_ranks {})", g, r, ranks));
      if (member[g][r]) fail(fmt::format("groups[{}]: rank {} listed twice", g, r));
      member[g][r] = 1;
    }
  }
  const auto streams = static_cast<std::uint32_t>(schedule.stream_names_size());
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const auto& ops = schedule.programs(static_cast<int>(r)).ops();
    for (int i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      auto where = [&] { return fmt::format("rank {} op {}", r, i); };
      if (op.stream() >= streams) fail(fmt::format("{}: stream {} out of range ({} streams)", where(), op.stream(), streams));
      for (auto d : op.deps()) {
        if (d >= static_cast<std::uint32_t>(i)) fail(fmt::format("{}: depends on op {}, which is not earlier", where(), d));
      }
      switch (op.kind_case()) {
        case proto::Op::kSend:
          if (op.send().peer() >= ranks) fail(fmt::format("{}: send peer {} out of range", where(), op.send().peer()));
          break;
        case proto::Op::kRecv:
          if (op.recv().peer() >= ranks) fail(fmt::format("{}: recv peer {} out of range", where(), op.recv().peer()));
          break;
        case proto::Op::kCollective: {
          const auto g = op.collective().group();
          if (g >= member.size()) fail(fmt::format("{}: unknown group {}", where(), g));
          if (!member[g][r]) fail(fmt::format("{}: rank {} is not a member of group {}", where(), r, g));
          if (op.collective().kind() == proto::COLLECTIVE_KIND_UNSPECIFIED) fail(fmt::format("{}: collective kind not set", where()));
          break;
        }
        case proto::Op::kCompute:
        case proto::Op::kMemory:
          break;
        case proto::Op::KIND_NOT_SET:
          fail(fmt::format("{}: op kind not set", where()));
      }
    }
  }
}

namespace {


enum class Status : std::uint8_t { Pending, Posted, Running, Done };

struct OpRef {
  std::uint32_t rank = 0;
  std::uint32_t op = 0;
};

struct Completion {
  double time;
  std::uint64_t seq;
  OpRef ref;
  bool operator>(const Completion& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

struct P2PKey {
  std::uint32_t src, dst, tag;
  bool operator==(const P2PKey&) const = default;
};
struct P2PKeyHash {
  std::size_t operator()(const P2PKey& k) const {
    std::uint64_t h = (static_cast<std::uint64_t>(k.src) << 32) ^ k.dst;
    h ^= static_cast<std::uint64_t>(k.tag) * 0x9E3779B97F4A7C15ull;
    return std::hash<std::uint64_t>{}(h);
  }
};

struct CollectiveArrival {
  std::vector<OpRef> arrived;
};

class Engine {
 public:
  Engine(const proto::Schedule& schedule, const NetworkModel& network, const ComputeTimer& timer,
         const AnalyticEngineOptions& options)
      : schedule_(schedule), network_(network), timer_(timer), options_(options) {}

  proto::Trace run() {
    build();
    for (std::uint32_t r = 0; r < ranks_; ++r) {
      for (std::uint32_t i = 0; i < state_[r].size(); ++i) {
        if (pending_[r][i] == 0) start({r, i}, 0.0);
      }
    }
    while (!heap_.empty()) {
      const Completion c = heap_.top();
      heap_.pop();
      complete(c.ref, c.time);
    }
    if (done_ < total_ops_) throw ScheduleDeadlock(deadlock_report());
    return trace();
  }

 private:
  const proto::Op& op(OpRef ref) const { return schedule_.programs(static_cast<int>(ref.rank)).ops(static_cast<int>(ref.op)); }

  void build() {
    ranks_ = schedule_.num_ranks();
    state_.resize(ranks_);
    pending_.resize(ranks_);
    successor_offsets_.resize(ranks_);
    successors_.resize(ranks_);
    start_.resize(ranks_);
    end_.resize(ranks_);
    memory_in_use_.assign(ranks_, 0);
    memory_peak_.assign(ranks_, 0);
    collective_count_.resize(ranks_);
    for (std::uint32_t r = 0; r < ranks_; ++r) {
      const auto& ops = schedule_.programs(static_cast<int>(r)).ops();
      const auto n = static_cast<std::size_t>(ops.size());
      total_ops_ += n;
      state_[r].assign(n, Status::Pending);
      pending_[r].assign(n, 0);
      start_[r].assign(n, 0.0);
      end_[r].assign(n, 0.0);
      // Successors in compressed rows: an op's stream successor and the ops that
      // depend on it. First count, then fill.
      auto& offsets = successor_offsets_[r];
      offsets.assign(n + 1, 0);
      auto for_each_edge = [&](auto&& edge) {
        std::vector<std::int64_t> last_on_stream(static_cast<std::size_t>(schedule_.stream_names_size()), -1);
        for (std::uint32_t i = 0; i < n; ++i) {
          const auto& o = ops[static_cast<int>(i)];
          auto& last = last_on_stream[o.stream()];
          if (last >= 0) edge(static_cast<std::uint32_t>(last), i);
          last = i;
          for (auto d : o.deps()) edge(d, i);
        }
      };
      for_each_edge([&](std::uint32_t from, std::uint32_t to) {
        ++offsets[from + 1];
        ++pending_[r][to];
      });
      for (std::size_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
      successors_[r].resize(offsets[n]);
      std::vector<std::uint32_t> fill(offsets.begin(), offsets.end() - 1);
      for_each_edge([&](std::uint32_t from, std::uint32_t to) { successors_[r][fill[from]++] = to; });
    }
    group_ranks_.resize(static_cast<std::size_t>(schedule_.groups_size()));
    for (const auto& g : schedule_.groups()) group_ranks_[g.id()].assign(g.ranks().begin(), g.ranks().end());
  }

  void finish_at(OpRef ref, double start, double end) {
    state_[ref.rank][ref.op] = Status::Running;
    start_[ref.rank][ref.op] = start;
    heap_.push(Completion{end, seq_++, ref});
  }

  void start(OpRef ref, double now) {
    const auto& o = op(ref);
    switch (o.kind_case()) {
      case proto::Op::kCompute:
        finish_at(ref, now, now + timer_(o.compute()).value);
        break;
      case proto::Op::kMemory:
        apply_memory(ref, o.memory(), now);
        finish_at(ref, now, now);
        break;
      case proto::Op::kSend:
        post_p2p(ref, P2PKey{ref.rank, o.send().peer(), o.send().tag()}, now, true);
        break;
      case proto::Op::kRecv:
        post_p2p(ref, P2PKey{o.recv().peer(), ref.rank, o.recv().tag()}, now, false);
        break;
      case proto::Op::kCollective:
        arrive_collective(ref, o.collective(), now);
        break;
      case proto::Op::KIND_NOT_SET:
        break;
    }
  }

  void complete(OpRef ref, double now) {
    state_[ref.rank][ref.op] = Status::Done;
    end_[ref.rank][ref.op] = now;
    ++done_;
    const auto& offsets = successor_offsets_[ref.rank];
    for (auto k = offsets[ref.op]; k < offsets[ref.op + 1]; ++k) {
      const auto s = successors_[ref.rank][k];
      if (--pending_[ref.rank][s] == 0) start({ref.rank, s}, now);
    }
  }

  void apply_memory(OpRef ref, const proto::MemoryOp& m, double now) {
    auto& in_use = memory_in_use_[ref.rank];
    if (m.allocate()) {
      in_use += m.size_bytes();
      memory_peak_[ref.rank] = std::max(memory_peak_[ref.rank], in_use);
    } else {
      if (m.size_bytes() > in_use) {
        throw ScheduleMismatch(fmt::format("rank {} op {} frees {} but only {} are allocated", ref.rank, ref.op,
                                           format_bytes(Bytes(m.size_bytes())), format_bytes(Bytes(in_use))));
      }
      in_use -= m.size_bytes();
    }
    memory_samples_.push_back({ref.rank, now, in_use});
  }

  void post_p2p(OpRef ref, const P2PKey& key, double now, bool is_send) {
    state_[ref.rank][ref.op] = Status::Posted;
    auto& theirs_by_key = is_send ? recvs_ : sends_;
    const auto it = theirs_by_key.find(key);
    if (it == theirs_by_key.end()) {
      (is_send ? sends_ : recvs_)[key].push_back(ref);
      return;
    }
    // Matched in posting order; a key's queue is almost always one op long.
    const OpRef other = it->second.front();
    it->second.erase(it->second.begin());
    if (it->second.empty()) theirs_by_key.erase(it);
    const OpRef send = is_send ? ref : other;
    const OpRef recv = is_send ? other : ref;
    const auto send_bytes = op(send).send().size_bytes();
    const auto recv_bytes = op(recv).recv().size_bytes();
    if (send_bytes != recv_bytes) {
      throw ScheduleMismatch(fmt::format("rank {} op {} sends {} bytes (tag {}) to rank {}, whose op {} receives {} bytes",
                                         send.rank, send.op, send_bytes, key.tag, recv.rank, recv.op, recv_bytes));
    }
    const double end = now + network_.p2p_time(send.rank, recv.rank, Bytes(send_bytes)).value;
    finish_at(send, now, end);
    finish_at(recv, now, end);
  }

  void arrive_collective(OpRef ref, const proto::CollectiveOp& c, double now) {
    state_[ref.rank][ref.op] = Status::Posted;
    const auto instance = collective_count_[ref.rank][c.group()]++;
    auto& arrival = collectives_[{c.group(), instance}];
    if (!arrival.arrived.empty()) {
      const auto& first = op(arrival.arrived.front()).collective();
      if (first.kind() != c.kind() || first.size_bytes() != c.size_bytes()) {
        throw ScheduleMismatch(fmt::format(
            "collective {} on group {}: rank {} op {} is a {} of {} bytes, but rank {} op {} is a {} of {} bytes", instance,
            c.group(), ref.rank, ref.op, collective_kind_name(c.kind()), c.size_bytes(), arrival.arrived.front().rank,
            arrival.arrived.front().op, collective_kind_name(first.kind()), first.size_bytes()));
      }
    }
    arrival.arrived.push_back(ref);
    const auto& members = group_ranks_[c.group()];
    if (arrival.arrived.size() < members.size()) return;
    const double end = now + network_.collective_time(c.kind(), c.algorithm(), members, Bytes(c.size_bytes())).value;
    for (const auto& member : arrival.arrived) finish_at(member, now, end);
    collectives_.erase({c.group(), instance});
  }

  std::string describe(OpRef ref) const {
    const auto& o = op(ref);
    const auto& stream = schedule_.stream_names(static_cast<int>(o.stream()));
    switch (o.kind_case()) {
      case proto::Op::kSend:
        return fmt::format("rank {} op {} (send to rank {}, tag {}, {} bytes, stream {})", ref.rank, ref.op,
                           o.send().peer(), o.send().tag(), o.send().size_bytes(), stream);
      case proto::Op::kRecv:
        return fmt::format("rank {} op {} (recv from rank {}, tag {}, {} bytes, stream {})", ref.rank, ref.op,
                           o.recv().peer(), o.recv().tag(), o.recv().size_bytes(), stream);
      case proto::Op::kCollective:
        return fmt::format("rank {} op {} ({} on group {}, {} bytes, stream {})", ref.rank, ref.op,
                           collective_kind_name(o.collective().kind()), o.collective().group(), o.collective().size_bytes(),
                           stream);
      default:
        return fmt::format("rank {} op {} (stream {})", ref.rank, ref.op, stream);
    }
  }

  // What the peer has posted on the same channel instead, if anything.
  std::string p2p_hint(std::uint32_t src, std::uint32_t dst, bool waiting_sender) const {
    const auto& posted = waiting_sender ? recvs_ : sends_;
    std::vector<std::string> other;
    for (const auto& [key, queue] : posted) {
      if (key.src == src && key.dst == dst && !queue.empty()) {
        for (const auto& ref : queue) other.push_back(describe(ref));
      }
    }
    if (other.empty()) {
      return waiting_sender ? fmt::format("rank {} has posted no receive from rank {}", dst, src)
                            : fmt::format("rank {} has posted no send to rank {}", src, dst);
    }
    std::sort(other.begin(), other.end());
    return fmt::format("posted instead: {}", fmt::join(other, "; "));
  }

  std::string deadlock_report() const {
    std::vector<std::string> lines;
    std::size_t waiting_on_deps = 0;
    std::vector<std::uint32_t> stuck_ranks;
    for (std::uint32_t r = 0; r < ranks_; ++r) {
      bool stuck = false;
      for (std::uint32_t i = 0; i < state_[r].size(); ++i) {
        if (state_[r][i] == Status::Done) continue;
        stuck = true;
        if (state_[r][i] != Status::Posted) {
          ++waiting_on_deps;
          continue;
        }
        const OpRef ref{r, i};
        const auto& o = op(ref);
        if (o.has_send()) {
          lines.push_back(fmt::format("{}: no matching receive; {}", describe(ref), p2p_hint(r, o.send().peer(), true)));
        } else if (o.has_recv()) {
          lines.push_back(fmt::format("{}: no matching send; {}", describe(ref), p2p_hint(o.recv().peer(), r, false)));
        } else if (o.has_collective()) {
          const auto g = o.collective().group();
          std::vector<std::uint32_t> missing;
          const auto it = collectives_.find({g, instance_of(ref)});
          for (auto member : group_ranks_[g]) {
            const bool arrived = it != collectives_.end() &&
                                 std::any_of(it->second.arrived.begin(), it->second.arrived.end(),
                                             [&](const OpRef& a) { return a.rank == member; });
            if (!arrived) missing.push_back(member);
          }
          lines.push_back(fmt::format("{}: waiting for group members {}", describe(ref), fmt::join(missing, ", ")));
        }
      }
      if (stuck) stuck_ranks.push_back(r);
    }
    std::string report = fmt::format("deadlock: {} of {} ops never finished on {} ranks; {} ops are blocked on peers:",
                                     total_ops_ - done_, total_ops_, stuck_ranks.size(), lines.size());
    const auto shown = std::min(lines.size(), options_.max_blocked_ops_reported);
    for (std::size_t i = 0; i < shown; ++i) report += "\n  " + lines[i];
    if (lines.size() > shown) report += fmt::format("\n  ... and {} more blocked ops", lines.size() - shown);
    report += fmt::format("\n  {} further ops wait on these through stream order or dependencies", waiting_on_deps);
    return report;
  }

  // Which instance of its group's collectives a posted collective op is.
  std::uint64_t instance_of(OpRef ref) const {
    const auto g = op(ref).collective().group();
    std::uint64_t k = 0;
    const auto& ops = schedule_.programs(static_cast<int>(ref.rank)).ops();
    for (std::uint32_t i = 0; i < ref.op; ++i) {
      if (ops[static_cast<int>(i)].has_collective() && ops[static_cast<int>(i)].collective().group() == g) ++k;
    }
    return k;
  }

  static std::int64_t to_ns(double seconds) { return std::llround(seconds * 1e9); }

  proto::Trace trace() const {
    proto::Trace t;
    t.set_scenario(schedule_.scenario());
    t.set_strategy(schedule_.strategy());
    t.set_engine("analytic");
    t.set_num_ranks(ranks_);
    for (const auto& s : schedule_.stream_names()) t.add_stream_names(s);
    t.set_memory_limit_bytes(schedule_.summary().memory_limit_bytes());
    double step = 0.0;
    t.mutable_events()->Reserve(static_cast<int>(total_ops_));
    for (std::uint32_t r = 0; r < ranks_; ++r) {
      for (std::uint32_t i = 0; i < state_[r].size(); ++i) {
        const auto& o = op({r, i});
        auto* e = t.add_events();
        e->set_rank(r);
        e->set_op(i);
        e->set_stream(o.stream());
        e->set_start_ns(to_ns(start_[r][i]));
        e->set_end_ns(to_ns(end_[r][i]));
        step = std::max(step, end_[r][i]);
        switch (o.kind_case()) {
          case proto::Op::kCompute:
            e->set_kind(proto::COMPUTE);
            e->set_phase(o.compute().phase());
            e->set_chunk(o.compute().chunk());
            e->set_stage(o.compute().stage());
            break;
          case proto::Op::kSend:
            e->set_kind(proto::SEND);
            e->set_peer(o.send().peer());
            e->set_size_bytes(o.send().size_bytes());
            break;
          case proto::Op::kRecv:
            e->set_kind(proto::RECV);
            e->set_peer(o.recv().peer());
            e->set_size_bytes(o.recv().size_bytes());
            break;
          case proto::Op::kCollective:
            e->set_kind(proto::COLLECTIVE);
            e->set_collective(o.collective().kind());
            e->set_group(o.collective().group());
            e->set_size_bytes(o.collective().size_bytes());
            break;
          case proto::Op::kMemory:
            e->set_kind(proto::MEMORY);
            e->set_size_bytes(o.memory().size_bytes());
            break;
          case proto::Op::KIND_NOT_SET:
            break;
        }
      }
    }
    t.set_step_time_ns(to_ns(step));
    // Memory samples grouped by rank, in time order within a rank.
    std::vector<std::size_t> order(memory_samples_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return memory_samples_[a].rank < memory_samples_[b].rank; });
    t.mutable_memory()->Reserve(static_cast<int>(order.size()));
    for (auto i : order) {
      const auto& s = memory_samples_[i];
      auto* m = t.add_memory();
      m->set_rank(s.rank);
      m->set_time_ns(to_ns(s.time));
      m->set_bytes(s.bytes);
    }
    return t;
  }

  struct MemorySample {
    std::uint32_t rank;
    double time;
    std::uint64_t bytes;
  };

  const proto::Schedule& schedule_;
  const NetworkModel& network_;
  const ComputeTimer& timer_;
  AnalyticEngineOptions options_;

  std::uint32_t ranks_ = 0;
  std::size_t total_ops_ = 0;
  std::size_t done_ = 0;
  std::uint64_t seq_ = 0;
  std::vector<std::vector<Status>> state_;
  std::vector<std::vector<std::uint32_t>> pending_;
  std::vector<std::vector<std::uint32_t>> successor_offsets_;
  std::vector<std::vector<std::uint32_t>> successors_;
  std::vector<std::vector<double>> start_;
  std::vector<std::vector<double>> end_;
  std::vector<std::uint64_t> memory_in_use_;
  std::vector<std::uint64_t> memory_peak_;
  std::vector<MemorySample> memory_samples_;
  std::vector<std::vector<std::uint32_t>> group_ranks_;
  std::vector<std::unordered_map<std::uint32_t, std::uint64_t>> collective_count_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, CollectiveArrival> collectives_;
  // Posted and not yet matched, per (sender, receiver, tag), in posting order.
  std::unordered_map<P2PKey, std::vector<OpRef>, P2PKeyHash> sends_;
  std::unordered_map<P2PKey, std::vector<OpRef>, P2PKeyHash> recvs_;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<Completion>> heap_;
};

}  // namespace

proto::Trace run_analytic(const proto::Schedule& schedule, const NetworkModel& network, const ComputeTimer& timer,
                          const AnalyticEngineOptions& options) {
  validate_schedule(schedule);
  Engine engine(schedule, network, timer, options);
  return engine.run();
}

}  // namespace eppsim
