#include "traces/rank_timeline.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "traces/csv_export.h"
#include "base/atomic_file.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

// What an event contributes to its rank's state while it runs; memory ops nothing.
std::optional<RankState> activity(OpEventRef e) {
  switch (e.kind()) {
    case proto::COMPUTE: return e.phase() == proto::RECOMPUTE ? RankState::Recompute : RankState::Compute;
    case proto::SEND:
    case proto::RECV:
    case proto::COLLECTIVE: return RankState::Communication;
    default: return std::nullopt;
  }
}

struct Edge {
  std::int64_t time_ns;
  int delta;  // +1 start, -1 end
  RankState what;
};

}  // namespace

std::string_view rank_state_name(RankState state) {
  switch (state) {
    case RankState::Compute: return "compute";
    case RankState::Recompute: return "recompute";
    case RankState::Communication: return "communication";
    case RankState::Idle: return "idle";
  }
  return "idle";
}

void for_each_rank_interval(const TraceParts& parts, const std::function<void(const RankInterval&)>& visit) {
  const proto::Trace& trace = parts.header();
  std::int64_t step_end = trace.step_time_ns();
  std::vector<std::vector<Edge>> edges(trace.num_ranks());
  parts.for_each_part([&](const proto::Trace& part, std::uint64_t) {
    for (const OpEventRef e : events_of(part)) {
      const auto what = activity(e);
      if (!what || e.rank() >= trace.num_ranks() || e.end_ns() <= e.start_ns()) continue;
      edges[e.rank()].push_back({e.start_ns(), +1, *what});
      edges[e.rank()].push_back({e.end_ns(), -1, *what});
      step_end = std::max(step_end, e.end_ns());
    }
  });
  for (const std::uint32_t r : listed_ranks(trace)) {
    std::vector<Edge> rank_edges = std::move(edges[r]);  // freed with the rank
    std::sort(rank_edges.begin(), rank_edges.end(),
              [](const Edge& a, const Edge& b) { return a.time_ns < b.time_ns; });
    std::array<int, 3> running{};  // compute, recompute, communication ops running
    const auto state = [&] {
      if (running[0] > 0) return RankState::Compute;
      if (running[1] > 0) return RankState::Recompute;
      if (running[2] > 0) return RankState::Communication;
      return RankState::Idle;
    };
    std::optional<RankInterval> open;  // the interval being extended
    std::int64_t at = 0;
    const auto emit = [&](std::int64_t until) {
      if (until <= at) return;
      const RankState s = state();
      if (open && open->state == s && open->end_ns == at) {
        open->end_ns = until;
      } else {
        if (open) visit(*open);
        open = RankInterval{r, at, until, s};
      }
      at = until;
    };
    for (std::size_t i = 0; i < rank_edges.size();) {
      const std::int64_t t = std::max<std::int64_t>(rank_edges[i].time_ns, 0);
      emit(t);
      for (; i < rank_edges.size() && std::max<std::int64_t>(rank_edges[i].time_ns, 0) == t; ++i) {
        running[static_cast<std::size_t>(rank_edges[i].what)] += rank_edges[i].delta;
      }
    }
    emit(step_end);
    if (open) visit(*open);
  }
}

std::vector<RankInterval> rank_timeline(const proto::Trace& trace) {
  std::vector<RankInterval> out;
  for_each_rank_interval(TraceInMemory(trace), [&](const RankInterval& i) { out.push_back(i); });
  return out;
}

namespace {

void append_csv_row(fmt::memory_buffer& out, const RankInterval& i) {
  fmt::format_to(std::back_inserter(out), "{},{},{},{}\n", i.rank, csv_seconds(i.start_ns), csv_seconds(i.end_ns),
                 rank_state_name(i.state));
}

constexpr std::string_view kCsvHeader = "rank,start_s,end_s,state\n";

}  // namespace

std::string rank_timeline_csv(const TraceParts& trace) {
  fmt::memory_buffer out;
  out.append(kCsvHeader);
  for_each_rank_interval(trace, [&](const RankInterval& i) { append_csv_row(out, i); });
  return fmt::to_string(out);
}

void write_rank_timeline_csv(const TraceParts& trace, const std::filesystem::path& path) {
  AtomicFileWriter file(path);
  fmt::memory_buffer out;
  out.append(kCsvHeader);
  for_each_rank_interval(trace, [&](const RankInterval& i) {
    append_csv_row(out, i);
    flush_if_full(out, file);
  });
  file.write(std::string_view(out.data(), out.size()));
  file.commit();
}

}  // namespace eppsim
