#include "schedule/compute_segments.h"

#include <algorithm>

namespace eppsim {

void add_segment(proto::ComputeOp& op, const Segment& segment) {
  op.add_segment_tokens(segment.tokens);
  op.add_segment_context_tokens(segment.context_tokens);
}

void read_segments(const proto::ComputeOp& op, std::vector<Segment>& out) {
  const int count = std::min(op.segment_tokens_size(), op.segment_context_tokens_size());
  out.resize(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = Segment{op.segment_tokens(i), op.segment_context_tokens(i)};
}

std::vector<Segment> segments_of(const proto::ComputeOp& op) {
  std::vector<Segment> out;
  read_segments(op, out);
  return out;
}

std::uint64_t new_tokens_of(const proto::ComputeOp& op) {
  std::uint64_t tokens = 0;
  for (const auto t : op.segment_tokens()) tokens += t;
  return tokens;
}

std::size_t convert_segment_messages(proto::Schedule& schedule) {
  std::size_t converted = 0;
  for (auto& program : *schedule.mutable_programs()) {
    for (auto& op : *program.mutable_ops()) {
      if (!op.has_compute() || op.compute().segments_size() == 0) continue;
      auto& c = *op.mutable_compute();
      for (const auto& s : c.segments()) add_segment(c, Segment{s.tokens(), s.context_tokens()});
      c.clear_segments();
      ++converted;
    }
  }
  return converted;
}

}  // namespace eppsim
