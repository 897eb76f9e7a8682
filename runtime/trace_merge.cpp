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

proto::Trace merge_traces(std::span<const proto::Trace> traces, std::span<const double> offsets_s) {
  if (traces.size() != offsets_s.size()) {
    throw std::invalid_argument(fmt::format("merge_traces: {} traces, {} offsets", traces.size(), offsets_s.size()));
  }
  proto::Trace merged;
  if (traces.empty()) return merged;
  merged.set_scenario(traces[0].scenario());
  merged.set_strategy(traces[0].strategy());
  merged.set_engine(traces[0].engine());
  merged.set_num_ranks(static_cast<std::uint32_t>(traces.size()));
  *merged.mutable_stream_names() = traces[0].stream_names();
  merged.set_memory_limit_bytes(traces[0].memory_limit_bytes());
  std::vector<std::int64_t> offset_ns(traces.size());
  std::int64_t start = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  for (std::size_t r = 0; r < traces.size(); ++r) {
    offset_ns[r] = std::llround(offsets_s[r] * 1e9);
    for (const OpEventRef e : events_of(traces[r])) {
      if (e.rank() != r) {
        throw std::invalid_argument(fmt::format("merge_traces: trace {} holds an event of rank {}", r, e.rank()));
      }
      start = std::min(start, e.start_ns() + offset_ns[r]);
      end = std::max(end, e.end_ns() + offset_ns[r]);
    }
  }
  if (start > end) start = end = 0;  // no events
  int events = 0;
  for (const auto& trace : traces) events += events_of(trace).size();
  reserve_events(*merged.mutable_op_events(), events);
  for (std::size_t r = 0; r < traces.size(); ++r) {
    const std::int64_t shift = offset_ns[r] - start;
    for (const OpEventRef e : events_of(traces[r])) {
      OpEventFields m = fields_of(e);
      m.start_ns += shift;
      m.end_ns += shift;
      add_event(*merged.mutable_op_events(), m);
    }
    for (const auto& s : traces[r].memory()) {
      if (s.rank() != r) {
        throw std::invalid_argument(fmt::format("merge_traces: trace {} holds a memory sample of rank {}", r, s.rank()));
      }
      auto* m = merged.add_memory();
      *m = s;
      m->set_time_ns(s.time_ns() + shift);
    }
  }
  merged.set_step_time_ns(end - start);
  return merged;
}

}  // namespace eppsim::runtime
