#include "sim/plan/plan_estimate.h"

#include <array>
#include <numeric>

#include "models/sequence_parallel_cost.h"

namespace eppsim {

double PlanEstimate::chunk_seconds(std::span<const Segment> segments, std::uint32_t degree, bool recompute) const {
  std::vector<std::uint64_t> key{degree, recompute ? 1u : 0u};
  std::uint64_t tokens = 0;  // new tokens: those the all-to-alls move
  for (const Segment& s : segments) {
    key.push_back(s.tokens);
    key.push_back(s.context_tokens);
    tokens += s.tokens;
  }
  if (auto it = chunk_cache_.find(key); it != chunk_cache_.end()) return it->second;
  std::vector<Pass> passes{Pass::Forward, Pass::Backward};
  if (recompute) passes.push_back(Pass::Recompute);
  const ChunkWork work{segments, model_.layers, true, true};
  double seconds = 0.0;
  for (Pass pass : passes) seconds += cost_.compute_time(ComputeWork{pass, work, LayerPart::Whole, degree}).value;
  if (degree > 1) {
    std::vector<std::uint32_t> group(degree);
    std::iota(group.begin(), group.end(), 0u);
    for (Pass pass : passes) seconds += model_.layers * ulysses_layer_time(model_, tokens, group, pass, cost_).value;
  }
  chunk_cache_.emplace(std::move(key), seconds);
  return seconds;
}

double PlanEstimate::part_recompute_seconds(std::span<const Segment> segments, std::uint32_t degree, LayerPart part,
                                            std::uint32_t layers) const {
  if (layers == 0) return 0.0;
  std::vector<std::uint64_t> key{degree, static_cast<std::uint64_t>(part), layers};
  for (const Segment& s : segments) {
    key.push_back(s.tokens);
    key.push_back(s.context_tokens);
  }
  if (auto it = part_cache_.find(key); it != part_cache_.end()) return it->second;
  const ChunkWork work{segments, layers, false, false};
  const double seconds = cost_.compute_time(ComputeWork{Pass::Recompute, work, part, degree}).value;
  part_cache_.emplace(std::move(key), seconds);
  return seconds;
}

double PlanEstimate::layer_forward_seconds(std::span<const Segment> segments, std::uint32_t degree) const {
  const ChunkWork work{segments, 1, false, false};
  return cost_.compute_time(ComputeWork{Pass::Forward, work, LayerPart::Whole, degree}).value;
}

Bins PlanEstimate::balance_replicas(std::span<const std::uint64_t> lengths, std::uint32_t replicas) const {
  std::vector<double> costs(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const std::array<Segment, 1> one{Segment{lengths[i], 0}};
    costs[i] = cost_.compute_time(ComputeWork{Pass::Forward, ChunkWork{one, model_.layers, false, false}}).value;
  }
  return longest_processing_time(costs, replicas);
}

}  // namespace eppsim
