#include "traces/trace_stats.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "base/errors.h"
#include "schedule/op_names.h"
#include "schedule/trace_events.h"

namespace eppsim {

std::map<OpKey, OpEventRef> events_by_op(const proto::Trace& trace, std::string_view name) {
  std::map<OpKey, OpEventRef> events;
  for (const OpEventRef e : events_of(trace)) {
    if (e.rank() >= trace.num_ranks()) {
      throw InputError(fmt::format("{}: events: rank {} op {} is outside the trace's {} ranks", name, e.rank(), e.op(),
                                   trace.num_ranks()));
    }
    if (!events.emplace(OpKey{e.rank(), e.op()}, e).second)
      throw InputError(fmt::format("{}: events: rank {} op {} appears twice", name, e.rank(), e.op()));
  }
  return events;
}

std::string event_difference(OpEventRef a, OpEventRef b) {
  const std::tuple<std::string_view, std::uint64_t, std::uint64_t> fields[] = {
      {"kind", a.kind(), b.kind()},         {"phase", a.phase(), b.phase()},
      {"collective", a.collective(), b.collective()}, {"peer", a.peer(), b.peer()},
      {"group", a.group(), b.group()},      {"size_bytes", a.size_bytes(), b.size_bytes()},
  };
  for (const auto& [field, x, y] : fields) {
    if (x != y) return fmt::format("{} {} vs {}", field, x, y);
  }
  return {};
}

std::string op_kind_label(OpEventRef e) {
  switch (e.kind()) {
    case proto::COMPUTE: {
      if (e.phase() == proto::PHASE_UNSPECIFIED) return "compute";
      std::string phase = proto::Phase_Name(e.phase());
      for (char& c : phase) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return "compute/" + phase;
    }
    case proto::SEND: return "send";
    case proto::RECV: return "recv";
    case proto::COLLECTIVE: return fmt::format("collective/{}", collective_kind_name(e.collective()));
    case proto::MEMORY: return "memory";
    default: break;
  }
  return fmt::format("kind {}", static_cast<int>(e.kind()));
}

std::pair<int, int> op_kind_order(OpEventRef e) {
  return {static_cast<int>(e.kind()), e.kind() == proto::COMPUTE ? static_cast<int>(e.phase())
                                                                : static_cast<int>(e.collective())};
}

std::int64_t earliest_start_ns(const proto::Trace& trace) {
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  for (const OpEventRef e : events_of(trace)) earliest = std::min(earliest, e.start_ns());
  return events_of(trace).empty() ? 0 : earliest;
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

std::vector<std::int64_t> busy_ns_per_rank(const proto::Trace& trace) {
  if (trace.busy_size() > 0) {
    // Counted as the ops ran, for every rank (a trace of ranks of interest, or a summary).
    std::vector<std::int64_t> busy(trace.num_ranks(), 0);
    for (const auto& b : trace.busy()) {
      if (b.rank() < trace.num_ranks()) busy[b.rank()] = b.busy_ns();
    }
    return busy;
  }
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> spans(trace.num_ranks());
  for (const OpEventRef e : events_of(trace)) {
    if (e.kind() != proto::MEMORY && e.rank() < trace.num_ranks()) spans[e.rank()].emplace_back(e.start_ns(), e.end_ns());
  }
  std::vector<std::int64_t> busy(trace.num_ranks());
  for (std::uint32_t r = 0; r < trace.num_ranks(); ++r) busy[r] = union_ns(std::move(spans[r]));
  return busy;
}

}  // namespace eppsim
