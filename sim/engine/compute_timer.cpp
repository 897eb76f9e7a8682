#include "sim/engine/compute_timer.h"

#include <vector>

#include "traces/op_cost.h"

namespace eppsim {

ComputeTimer cost_model_timer(const ComputeCostModel& cost, const GpuSpec& gpu) {
  return [&cost, bandwidth = gpu.memory_bandwidth](const proto::ComputeOp& op) {
    if (op.phase() == proto::OPTIMIZER || op.phase() == proto::PHASE_UNSPECIFIED) {
      return transfer_time(Bytes(op.memory_traffic_bytes()), bandwidth);
    }
    std::vector<Segment> segments;
    segments.reserve(static_cast<std::size_t>(op.segments_size()));
    for (const auto& s : op.segments()) segments.push_back(Segment{s.tokens(), s.context_tokens()});
    const ChunkWork chunk{segments, op.layer_count(), op.first_layer() == 0, op.includes_lm_head()};
    // The cost model returns this rank's share of a chunk split over `shards` GPUs.
    return cost.cost(ComputeWork{pass_of(op.phase()), chunk, to_model(op.layer_part()), op.shards() > 1 ? op.shards() : 1}).time;
  };
}

ComputeTimer planner_estimate_timer() {
  return [](const proto::ComputeOp& op) { return Seconds(static_cast<double>(op.estimated_duration_ns()) * 1e-9); };
}

}  // namespace eppsim
