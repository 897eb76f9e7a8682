#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"
#include "base/input_limits.h"
#include "schedule/executor/executor_state.h"
#include "schedule/op_names.h"
#include "schedule/rank_busy.h"
#include "schedule/trace_events.h"

namespace eppsim {

using namespace executor_detail;

namespace {

// The fields of a compute op's work its trace event carries.
struct WorkLabel {
  proto::Phase phase;
  std::uint32_t chunk, stage;
  static WorkLabel of(const proto::ComputeOp& work) { return {work.phase(), work.chunk(), work.stage()}; }
};

}  // namespace

std::string ExecutorCore::State::describe(std::uint32_t g) const {
  const OpView o = view(g);
  const auto [r, i] = ref(g);
  const auto& stream = schedule.stream_names(static_cast<int>(o.stream()));
  switch (kind_of(o)) {
    case Kind::Send:
      return fmt::format("rank {} op {} (send to rank {}, tag {}, {} bytes, stream {})", r, i, o.peer(), o.tag(),
                         o.size_bytes(), stream);
    case Kind::Recv:
      return fmt::format("rank {} op {} (recv from rank {}, tag {}, {} bytes, stream {})", r, i, o.peer(), o.tag(),
                         o.size_bytes(), stream);
    case Kind::Collective:
      return fmt::format("rank {} op {} ({} on group {}, {} bytes, stream {})", r, i,
                         collective_kind_name(o.collective_kind()), o.group(), o.size_bytes(), stream);
    default:
      return fmt::format("rank {} op {} (stream {})", r, i, stream);
  }
}

// What the peer has posted from `src` to `dst` under other tags, if anything:
// its posted receives from `src` (or sends to `dst`), none of them matched.
std::string ExecutorCore::State::p2p_hint(std::uint32_t src, std::uint32_t dst, bool waiting_sender) const {
  std::vector<std::string> other;
  const auto peer = waiting_sender ? dst : src;
  for (auto g = rank_offset[peer]; g < rank_offset[peer + 1]; ++g) {
    if (op[g].status != Status::Posted || op[g].kind != (waiting_sender ? Kind::Recv : Kind::Send)) continue;
    if (view(g).peer() == (waiting_sender ? src : dst)) other.push_back(describe(g));
  }
  if (other.empty()) {
    return waiting_sender ? fmt::format("rank {} has posted no receive from rank {}", dst, src)
                          : fmt::format("rank {} has posted no send to rank {}", src, dst);
  }
  std::sort(other.begin(), other.end());
  return fmt::format("posted instead: {}", fmt::join(other, "; "));
}

std::string ExecutorCore::State::blocked_line(std::uint32_t g) const {
  const OpView o = view(g);
  const auto r = rank_of(g);
  if (matching == Matching::Local) {
    return fmt::format("{}: handed to the executor, which has not finished it (its peers did not match it)", describe(g));
  }
  switch (op[g].kind) {
    case Kind::Send:
      return fmt::format("{}: no matching receive; {}", describe(g), p2p_hint(r, o.peer(), true));
    case Kind::Recv:
      return fmt::format("{}: no matching send; {}", describe(g), p2p_hint(o.peer(), r, false));
    default: {
      const auto group = o.group();
      const Instances& of = instances_of[group];
      // Posted: its link is its instance.
      const auto row = of.arrival + static_cast<std::uint64_t>(op[g].link - of.first) * of.size;
      std::vector<std::uint32_t> missing;
      for (std::uint32_t p = 0; p < of.size; ++p) {
        if (arrival[row + p] == kNone) missing.push_back(group_members[group_offset[group] + p]);
      }
      return fmt::format("{}: waiting for group members {}", describe(g), fmt::join(missing, ", "));
    }
  }
}

void ExecutorCore::throw_deadlock() const {
  const auto& s = *state_;
  std::vector<std::uint32_t> blocked;
  std::size_t waiting_on_deps = 0;
  std::size_t stuck_ranks = 0;
  for (std::uint32_t r = 0; r < s.ranks; ++r) {
    if (!s.local[r]) continue;
    bool stuck = false;
    for (auto g = s.rank_offset[r]; g < s.rank_offset[r + 1]; ++g) {
      const auto& state = s.op[g];
      if (state.status == Status::Done) continue;
      stuck = true;
      const bool communication = state.kind == Kind::Send || state.kind == Kind::Recv || state.kind == Kind::Collective;
      const bool waits_on_peers = state.status == Status::Posted ||
                                  (s.matching == State::Matching::Local && state.status == Status::Running && communication);
      if (waits_on_peers) {
        blocked.push_back(g);
      } else {
        ++waiting_on_deps;
      }
    }
    stuck_ranks += stuck;
  }
  std::string report = fmt::format("deadlock: {} of {} ops never finished on {} ranks; {} ops are blocked on peers:",
                                   s.total - s.done, s.total, stuck_ranks, blocked.size());
  const auto shown = std::min(blocked.size(), s.options.max_blocked_ops_reported);
  for (std::size_t i = 0; i < shown; ++i) report += "\n  " + s.blocked_line(blocked[i]);
  if (blocked.size() > shown) report += fmt::format("\n  ... and {} more blocked ops", blocked.size() - shown);
  report += fmt::format("\n  {} further ops wait on these through stream order or dependencies", waiting_on_deps);
  throw ScheduleDeadlock(report);
}

std::vector<std::string> ExecutorCore::unfinished_ops() const {
  const auto& s = *state_;
  std::vector<std::string> lines;
  std::size_t more = 0;
  for (std::uint32_t g = 0; g + 1 < s.op.size(); ++g) {
    const auto& state = s.op[g];
    if (!s.local[s.rank_of(g)] || (state.status != Status::Running && state.status != Status::Posted)) continue;
    if (lines.size() == s.options.max_blocked_ops_reported) {
      ++more;
      continue;
    }
    const OpView o = s.view(g);
    if (state.status == Status::Running) {
      lines.push_back(fmt::format("{}: running since {:.9f} s", s.describe(g), s.start_of(g)));
    } else if (state.kind == Kind::Send) {
      lines.push_back(fmt::format("{}: waiting for rank {}'s receive", s.describe(g), o.peer()));
    } else if (state.kind == Kind::Recv) {
      lines.push_back(fmt::format("{}: waiting for rank {}'s send", s.describe(g), o.peer()));
    } else {
      lines.push_back(s.blocked_line(g));  // the group members it waits for
    }
  }
  if (more > 0) lines.push_back(fmt::format("... and {} more", more));
  return lines;
}

const proto::Schedule& ExecutorCore::schedule() const { return state_->schedule; }
OpView ExecutorCore::op(OpRef ref) const { return state_->view(ref); }

proto::Trace ExecutorCore::trace(const std::string& engine) const {
  const auto& s = *state_;
  proto::Trace t;
  t.set_scenario(s.schedule.scenario());
  t.set_strategy(s.schedule.strategy());
  t.set_engine(engine);
  t.set_num_ranks(s.ranks);
  for (const auto& name : s.schedule.stream_names()) t.add_stream_names(name);
  t.set_memory_limit_bytes(s.schedule.summary().memory_limit_bytes());
  // The ranks whose op events and memory samples the trace lists.
  std::vector<bool> listed(s.ranks, true);
  // A rank of a replica simulated through another's has its source rank's
  // figures and events (schedule/identical_replicas.h).
  const auto source_of = [&](std::uint32_t r) { return s.source_rank.empty() ? r : s.source_rank[r]; };
  if (!s.options.record_op_events) {
    // The busy times counted as the ops ran (no per-op record was kept).
    for (std::uint32_t r = 0; r < s.ranks; ++r) *t.add_busy() = s.rank_run[source_of(r)].counted.figures(r);
    t.set_step_time_ns(to_ns(s.last_end_s, [] { return std::string("schedule: the step"); }));
  } else {
    // What an event names of its work, for each shared work read once here
    // instead of through each op (the works are spread over the heap).
    std::vector<WorkLabel> shared_labels;
    shared_labels.reserve(static_cast<std::size_t>(s.schedule.shared_computes_size()));
    for (const auto& work : s.schedule.shared_computes()) shared_labels.push_back(WorkLabel::of(work));
    // Each done op's event, rank by rank: `visit(event)` for each.
    const auto for_each_event = [&](std::uint32_t r, auto visit) {
      const std::uint32_t source = source_of(r);
      for (const OpView o : ops_of(s.schedule, source)) {
        const auto i = o.index();
        const auto g = s.rank_offset[source] + i;
        if (!s.done_op(g)) continue;
        OpEventFields e;
        e.rank = r;
        e.op = i;
        e.stream = o.stream();
        e.start_ns = to_ns(s.span[g].start_s, [&] { return fmt::format("schedule: {} starts", s.describe(g)); });
        e.end_ns = to_ns(s.span[g].end_s, [&] { return fmt::format("schedule: {} ends", s.describe(g)); });
        switch (kind_of(o)) {
          case Kind::Compute: {
            e.kind = proto::COMPUTE;
            const WorkLabel label = shared_labels[o.shared_compute()];
            e.phase = label.phase;
            e.chunk = label.chunk;
            e.stage = label.stage;
            break;
          }
          case Kind::Send:
          case Kind::Recv:
            e.kind = o.is_send() ? proto::SEND : proto::RECV;
            e.peer = o.peer() - source + r;  // in the rank's own replica
            e.size_bytes = o.size_bytes();
            break;
          case Kind::Collective:
            e.kind = proto::COLLECTIVE;
            e.collective = o.collective_kind();
            e.group = o.group();
            e.size_bytes = o.size_bytes();
            break;
          case Kind::Allocate:
          case Kind::Free:
            e.kind = proto::MEMORY;
            e.size_bytes = o.size_bytes();
            break;
        }
        visit(e);
      }
    };
    std::int64_t step_ns = 0;
    const bool every_rank = s.options.traced_ranks.empty() && !s.options.trace_slowest_rank;
    if (!every_rank) {
      listed.assign(s.ranks, false);
      // Every rank's busy figures, which the report reads, and the slowest
      // rank: the one whose ops end last, the busiest of those.
      RankBusyCounter counter;
      std::int64_t slowest_end_ns = -1, slowest_busy_ns = -1;
      std::uint32_t slowest = 0;
      for (std::uint32_t r = 0; r < s.ranks; ++r) {
        std::int64_t last_end_ns = 0;
        for_each_event(r, [&](const OpEventFields& e) {
          counter.add(e.kind, e.phase, e.start_ns, e.end_ns);
          last_end_ns = std::max(last_end_ns, e.end_ns);
        });
        proto::RankBusy busy = counter.take(r);
        if (last_end_ns > slowest_end_ns || (last_end_ns == slowest_end_ns && busy.busy_ns() > slowest_busy_ns)) {
          slowest = r;
          slowest_end_ns = last_end_ns;
          slowest_busy_ns = busy.busy_ns();
        }
        step_ns = std::max(step_ns, last_end_ns);
        *t.add_busy() = std::move(busy);
      }
      for (const auto r : s.options.traced_ranks) {
        if (r < s.ranks) listed[r] = true;
      }
      if (s.options.trace_slowest_rank && s.ranks > 0) listed[slowest] = true;
      for (std::uint32_t r = 0; r < s.ranks; ++r) {
        if (listed[r]) t.add_traced_ranks(r);
      }
    }
    auto& events = *t.mutable_op_events();
    if (every_rank) reserve_events(events, static_cast<int>(s.done));
    for (std::uint32_t r = 0; r < s.ranks; ++r) {
      if (!listed[r]) continue;
      for_each_event(r, [&](const OpEventFields& e) {
        step_ns = std::max(step_ns, e.end_ns);
        add_event(events, e);
      });
    }
    t.set_step_time_ns(step_ns);
  }
  // Each rank's peak, as one sample (a rank that never holds bytes has none).
  const auto add_peak = [&](std::uint32_t r) {
    const std::uint32_t source = source_of(r);
    if (s.rank_run[source].peak == 0) return;
    auto* m = t.add_memory();
    m->set_rank(r);
    m->set_time_ns(to_ns(s.peak_time_s[source], [&] { return fmt::format("schedule: rank {}'s memory peak", r); }));
    m->set_bytes(s.rank_run[source].peak);
  };
  if (!s.options.record_memory_samples) {
    for (std::uint32_t r = 0; r < s.ranks; ++r) add_peak(r);
    return t;
  }
  // Memory samples grouped by rank (a stable counting sort), in time order
  // within a rank; a rank whose events are not listed has its peak alone.
  std::vector<std::size_t> first(s.ranks + 1, 0);
  for (const auto& sample : s.samples) ++first[sample.rank + 1];
  for (std::uint32_t r = 0; r < s.ranks; ++r) first[r + 1] += first[r];
  std::vector<std::uint32_t> order(s.samples.size());
  {
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    for (std::uint32_t i = 0; i < s.samples.size(); ++i) order[next[s.samples[i].rank]++] = i;
  }
  if (t.traced_ranks().empty()) t.mutable_memory()->Reserve(static_cast<int>(order.size()));
  for (std::uint32_t r = 0; r < s.ranks; ++r) {
    if (!listed[r]) {
      add_peak(r);
      continue;
    }
    const std::uint32_t source = source_of(r);
    for (auto k = first[source]; k < first[source + 1]; ++k) {
      const auto& sample = s.samples[order[k]];
      auto* m = t.add_memory();
      m->set_rank(r);
      m->set_time_ns(to_ns(sample.time_s, [&] { return fmt::format("schedule: rank {}'s memory sample", sample.rank); }));
      m->set_bytes(sample.bytes);
    }
  }
  return t;
}

}  // namespace eppsim
