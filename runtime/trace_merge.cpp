#include "runtime/trace_merge.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "schedule/trace_events.h"

namespace eppsim::runtime {

double estimate_clock_offset(std::span<const PingPong> exchanges) {
  if (exchanges.empty()) throw std::invalid_argument("estimate_clock_offset: no ping-pongs");
  const auto best = std::min_element(exchanges.begin(), exchanges.end(), [](const PingPong& a, const PingPong& b) {
    return a.round_trip_s() < b.round_trip_s();
  });
  return (best->sent_s + best->received_s) / 2.0 - best->peer_s;
}

double merged_step_time_s(std::span<const RankSpan> spans, std::span<const double> offsets_s) {
  if (spans.size() != offsets_s.size()) {
    throw std::invalid_argument(fmt::format("merged_step_time_s: {} spans, {} offsets", spans.size(), offsets_s.size()));
  }
  double start = std::numeric_limits<double>::infinity();
  double end = -std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < spans.size(); ++r) {
    start = std::min(start, spans[r].start_s + offsets_s[r]);
    end = std::max(end, spans[r].end_s + offsets_s[r]);
  }
  return spans.empty() ? 0.0 : end - start;
}

RankSpan trace_span(const proto::Trace& trace) {
  if (events_of(trace).empty()) return {};
  std::int64_t start = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  for (const OpEventRef e : events_of(trace)) {
    start = std::min(start, e.start_ns());
    end = std::max(end, e.end_ns());
  }
  return {static_cast<double>(start) * 1e-9, static_cast<double>(end) * 1e-9};
}

proto::Trace merge_onto_clock(std::span<const proto::Trace> traces, std::span<const double> offsets_s,
                              std::span<const std::uint32_t> ranks) {
  if (traces.size() != offsets_s.size() || (!ranks.empty() && ranks.size() != traces.size())) {
    throw std::invalid_argument(fmt::format("merge_onto_clock: {} traces, {} offsets, {} ranks", traces.size(),
                                            offsets_s.size(), ranks.size()));
  }
  proto::Trace merged;
  if (traces.empty()) return merged;
  merged.set_scenario(traces[0].scenario());
  merged.set_strategy(traces[0].strategy());
  merged.set_engine(traces[0].engine());
  merged.set_num_ranks(static_cast<std::uint32_t>(traces.size()));
  *merged.mutable_stream_names() = traces[0].stream_names();
  merged.set_memory_limit_bytes(traces[0].memory_limit_bytes());
  int events = 0;
  for (const auto& trace : traces) events += events_of(trace).size();
  reserve_events(*merged.mutable_op_events(), events);
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const std::uint32_t rank = ranks.empty() ? static_cast<std::uint32_t>(i) : ranks[i];
    const std::int64_t offset_ns = std::llround(offsets_s[i] * 1e9);
    for (const OpEventRef e : events_of(traces[i])) {
      if (e.rank() != rank) {
        throw std::invalid_argument(fmt::format("merge_onto_clock: trace {} holds an event of rank {}", i, e.rank()));
      }
      OpEventFields m = fields_of(e);
      m.start_ns += offset_ns;
      m.end_ns += offset_ns;
      add_event(*merged.mutable_op_events(), m);
    }
    for (const auto& s : traces[i].memory()) {
      if (s.rank() != rank) {
        throw std::invalid_argument(fmt::format("merge_onto_clock: trace {} holds a memory sample of rank {}", i, s.rank()));
      }
      auto* m = merged.add_memory();
      *m = s;
      m->set_time_ns(s.time_ns() + offset_ns);
    }
  }
  return merged;
}

proto::Trace merge_traces(std::span<const proto::Trace> traces, std::span<const double> offsets_s) {
  proto::Trace merged = merge_onto_clock(traces, offsets_s);
  proto::OpEvents& columns = *merged.mutable_op_events();
  std::int64_t start = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  for (int i = 0; i < columns.start_ns_size(); ++i) {
    start = std::min(start, columns.start_ns(i));
    end = std::max(end, columns.end_ns(i));
  }
  if (start > end) start = end = 0;  // no events
  for (int i = 0; i < columns.start_ns_size(); ++i) {
    columns.set_start_ns(i, columns.start_ns(i) - start);
    columns.set_end_ns(i, columns.end_ns(i) - start);
  }
  for (auto& m : *merged.mutable_memory()) m.set_time_ns(m.time_ns() - start);
  merged.set_step_time_ns(end - start);
  return merged;
}

}  // namespace eppsim::runtime
