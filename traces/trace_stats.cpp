#include "traces/trace_stats.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "base/errors.h"
#include "schedule/op_names.h"
#include "schedule/trace_events.h"
#include "schedule/trace_parts.h"

namespace eppsim {

std::string event_difference(const OpEventFields& a, const OpEventFields& b) {
  const std::tuple<std::string_view, std::uint64_t, std::uint64_t> fields[] = {
      {"kind", a.kind, b.kind},         {"phase", a.phase, b.phase},
      {"collective", a.collective, b.collective}, {"peer", a.peer, b.peer},
      {"group", a.group, b.group},      {"size_bytes", a.size_bytes, b.size_bytes},
  };
  for (const auto& [field, x, y] : fields) {
    if (x != y) return fmt::format("{} {} vs {}", field, x, y);
  }
  return {};
}

std::string op_kind_label(const OpEventFields& e) {
  switch (e.kind) {
    case proto::COMPUTE: {
      if (e.phase == proto::PHASE_UNSPECIFIED) return "compute";
      std::string phase = proto::Phase_Name(e.phase);
      for (char& c : phase) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return "compute/" + phase;
    }
    case proto::SEND: return "send";
    case proto::RECV: return "recv";
    case proto::COLLECTIVE: return fmt::format("collective/{}", collective_kind_name(e.collective));
    case proto::MEMORY: return "memory";
    default: break;
  }
  return fmt::format("kind {}", static_cast<int>(e.kind));
}

std::pair<int, int> op_kind_order(const OpEventFields& e) {
  return {static_cast<int>(e.kind), e.kind == proto::COMPUTE ? static_cast<int>(e.phase) : static_cast<int>(e.collective)};
}

std::int64_t union_ns(std::vector<std::pair<std::int64_t, std::int64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  std::int64_t total = 0, covered_to = std::numeric_limits<std::int64_t>::min();
  for (const auto& [start, end] : spans) {
    const std::int64_t from = std::max(start, covered_to);
    if (end > from) total += end - from;
    covered_to = std::max(covered_to, end);
  }
  return total;
}

TraceTally tally_trace(const TraceParts& parts, const std::function<void(const OpEventFields&)>& each) {
  const proto::Trace& trace = parts.header();
  const std::uint32_t ranks = trace.num_ranks();
  TraceTally tally;
  tally.events_per_rank.assign(ranks, 0);
  tally.busy_ns.assign(ranks, 0);
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  bool busy_figures = false;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> spans(ranks);
  parts.for_each_part([&](const proto::Trace& part, std::uint64_t) {
    for (const OpEventRef ref : events_of(part)) {
      const OpEventFields e = fields_of(ref);
      if (e.rank >= ranks) {
        throw InputError(fmt::format("{}: events: rank {} op {} is outside the trace's {} ranks", parts.name(), e.rank,
                                     e.op, ranks));
      }
      earliest = std::min(earliest, e.start_ns);
      ++tally.events_per_rank[e.rank];
      if (e.kind != proto::MEMORY && !busy_figures) spans[e.rank].emplace_back(e.start_ns, e.end_ns);
      if (each) each(e);
    }
    // Counted as the ops ran, for every rank (a trace of ranks of interest, or a summary).
    for (const proto::RankBusy& b : part.busy()) {
      if (!busy_figures) spans.assign(ranks, {});
      busy_figures = true;
      if (b.rank() < ranks) tally.busy_ns[b.rank()] = b.busy_ns();
    }
  });
  tally.earliest_start_ns = earliest == std::numeric_limits<std::int64_t>::max() ? 0 : earliest;
  if (!busy_figures) {
    for (std::uint32_t r = 0; r < ranks; ++r) tally.busy_ns[r] = union_ns(std::move(spans[r]));
  }
  return tally;
}

}  // namespace eppsim
