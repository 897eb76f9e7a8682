#pragma once
// A planner turns one sampled global batch into a Schedule for the scenario's
// cluster. Every strategy implements this interface; nothing downstream of the
// Schedule knows which planner made it.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/scenario.h"
#include "sim/plan/plan_context.h"
#include "proto/schedule.pb.h"

namespace eppsim {

class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string name() const = 0;
  // The Schedule of the batch on the context's ranks (plan_context.h: the
  // model, placement, cost model and memory limit; the planner's own options
  // it was made with). Throws InputError when the batch cannot fit in GPU
  // memory; the message says what to change.
  virtual proto::Schedule plan(const PlanContext& context, std::span<const std::uint64_t> sequence_lengths) const = 0;
};

class ScheduleBuilder;

// What every planner records about its plan in the Schedule's summary.
struct PlanSummary {
  std::uint64_t sequences = 0;
  std::uint64_t tokens = 0;
  std::uint32_t micro_batches = 0;  // the most on any pipeline or group
  double model_flops = 0.0;         // forward + backward, no recompute
  std::uint32_t pipeline_stages = 1;
  std::uint32_t data_parallel = 1;
};

// PlanDecisions (the summary's record of what the planner decided): adds stage
// `stage`'s recomputation, `checkpointed_layer_chunks` of its `layers` x
// `chunks` (layer, chunk) units with at most `most_checkpointed_layers` in one
// chunk, to the per-stage list and the totals.
void add_stage_checkpointing(proto::PlanDecisions* decisions, std::uint32_t stage, std::uint32_t layers,
                             std::uint32_t chunks, std::uint32_t checkpointed_layer_chunks,
                             std::uint32_t most_checkpointed_layers);

// Fills the Schedule's summary, with each rank's planned peak memory (its
// MEMORY ops in program order), and returns the Schedule. Throws InputError for
// the first rank over the scenario's memory limit:
//   "<source>: <strategy>: rank R<where(R)> needs X but the memory limit is Y; <advice>"
proto::Schedule finish_plan(ScheduleBuilder& builder, const PlanContext& scenario, const PlanSummary& summary,
                            std::string_view strategy, const std::function<std::string(std::uint32_t rank)>& where,
                            std::string_view advice);

// Adam on a rank's `shard_params` parameters with fp32 master weights: it reads
// the gradient (2 B), master weights, m and v (12 B) and writes the three back
// (12 B) and the bf16 weights (2 B), 28 bytes and 12 FLOPs per parameter,
// timed by the GPU's memory bandwidth.
proto::ComputeOp adam_step_op(const PlanContext& scenario, double shard_params, std::uint32_t stage,
                              std::uint32_t first_layer, std::uint32_t layer_count);

// Names of every strategy, in a stable order (sim/plan/planner_registry.h).
std::vector<std::string> planner_names();
// The planner of `strategy` with its options resolved from the fully resolved
// `scenario` (planner_registry.h). Throws InputError, located by the scenario's
// FieldLocator, for an unknown strategy (listing the known ones) or options
// that break the strategy's rules.
std::unique_ptr<Planner> make_planner(std::string_view strategy, const ResolvedScenario& scenario);

// The global batch a scenario describes: global_batch / repeats lengths
// sampled with its seed, the whole draw repeated `repeats` times.
std::vector<std::uint64_t> sample_batch(const ResolvedScenario& scenario);

}  // namespace eppsim
