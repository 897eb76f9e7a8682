#include "traces/rank_timeline.h"

#include <algorithm>
#include <array>
#include <optional>

#include <fmt/format.h>

#include "traces/csv_export.h"
#include "base/proto_io.h"
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

std::vector<RankInterval> rank_timeline(const proto::Trace& trace) {
  std::int64_t step_end = trace.step_time_ns();
  std::vector<std::vector<Edge>> edges(trace.num_ranks());
  for (const OpEventRef e : events_of(trace)) {
    const auto what = activity(e);
    if (!what || e.rank() >= trace.num_ranks() || e.end_ns() <= e.start_ns()) continue;
    edges[e.rank()].push_back({e.start_ns(), +1, *what});
    edges[e.rank()].push_back({e.end_ns(), -1, *what});
    step_end = std::max(step_end, e.end_ns());
  }
  std::vector<RankInterval> out;
  for (const std::uint32_t r : listed_ranks(trace)) {
    auto& rank_edges = edges[r];
    std::sort(rank_edges.begin(), rank_edges.end(),
              [](const Edge& a, const Edge& b) { return a.time_ns < b.time_ns; });
    std::array<int, 3> running{};  // compute, recompute, communication ops running
    const auto state = [&] {
      if (running[0] > 0) return RankState::Compute;
      if (running[1] > 0) return RankState::Recompute;
      if (running[2] > 0) return RankState::Communication;
      return RankState::Idle;
    };
    std::int64_t at = 0;
    const auto emit = [&](std::int64_t until) {
      if (until <= at) return;
      const RankState s = state();
      if (!out.empty() && out.back().rank == r && out.back().state == s && out.back().end_ns == at) {
        out.back().end_ns = until;
      } else {
        out.push_back({r, at, until, s});
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
  }
  return out;
}

std::string rank_timeline_csv(const proto::Trace& trace) {
  std::string csv = "rank,start_s,end_s,state\n";
  for (const auto& i : rank_timeline(trace)) {
    csv += fmt::format("{},{},{},{}\n", i.rank, csv_seconds(i.start_ns), csv_seconds(i.end_ns), rank_state_name(i.state));
  }
  return csv;
}

void write_rank_timeline_csv(const proto::Trace& trace, const std::filesystem::path& path) {
  write_file_atomically(path, rank_timeline_csv(trace));
}

}  // namespace eppsim
