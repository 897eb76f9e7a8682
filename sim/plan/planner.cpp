#include "sim/plan/planner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/errors.h"
#include "sim/plan/epp.h"
#include "sim/plan/flexsp.h"
#include "sim/plan/packed_1f1b.h"
#include "sim/plan/schedule_builder.h"
#include "sim/plan/seq1f1b.h"
#include "sim/plan/ulysses.h"

namespace eppsim {

proto::ComputeOp adam_step_op(const ResolvedScenario& sc, double shard_params, std::uint32_t stage,
                              std::uint32_t first_layer, std::uint32_t layer_count) {
  proto::ComputeOp optimizer;
  optimizer.set_phase(proto::OPTIMIZER);
  optimizer.set_stage(stage);
  optimizer.set_first_layer(first_layer);
  optimizer.set_layer_count(layer_count);
  const auto traffic = static_cast<std::uint64_t>(shard_params * 28.0);
  optimizer.set_flops(shard_params * 12.0);
  optimizer.set_memory_traffic_bytes(traffic);
  optimizer.set_estimated_duration_ns(
      static_cast<std::int64_t>(static_cast<double>(traffic) / sc.cluster.gpu.memory_bandwidth.value * 1e9 + 0.5));
  return optimizer;
}

std::vector<std::string> planner_names() {
  return {"packed-1f1b", "ulysses",     "ulysses-adaptive", "seq1f1b",        "flexsp",
          "epp",         "epp-no-ckpt", "epp-full-ckpt",    "epp-even-split", "epp-flex"};
}

std::unique_ptr<Planner> make_planner(std::string_view strategy, ScheduleEvaluator evaluate) {
  if (strategy == "packed-1f1b") return std::make_unique<Packed1F1BPlanner>();
  if (strategy == "ulysses") return std::make_unique<UlyssesPlanner>();
  if (strategy == "ulysses-adaptive") return std::make_unique<UlyssesAdaptivePlanner>();
  if (strategy == "seq1f1b") return std::make_unique<Seq1F1BPlanner>();
  if (strategy == "flexsp") return std::make_unique<FlexSpPlanner>();
  if (strategy == "epp") return std::make_unique<EppPlanner>(EppVariant::Faithful);
  if (strategy == "epp-no-ckpt") return std::make_unique<EppPlanner>(EppVariant::NoCheckpoint);
  if (strategy == "epp-full-ckpt") return std::make_unique<EppPlanner>(EppVariant::FullCheckpoint);
  if (strategy == "epp-even-split") return std::make_unique<EppPlanner>(EppVariant::EvenSplit);
  if (strategy == "epp-flex") return std::make_unique<EppPlanner>(EppVariant::Flex, std::move(evaluate));
  throw InputError(fmt::format("unknown strategy '{}' (known: {})", strategy, fmt::join(planner_names(), ", ")));
}

proto::Schedule finish_plan(ScheduleBuilder& builder, const ResolvedScenario& scenario, const PlanSummary& plan,
                            std::string_view strategy, const std::function<std::string(std::uint32_t rank)>& where,
                            std::string_view advice) {
  auto* summary = builder.summary();
  summary->set_sequences(plan.sequences);
  summary->set_tokens(plan.tokens);
  summary->set_micro_batches(plan.micro_batches);
  summary->set_model_flops(plan.model_flops);
  summary->set_memory_limit_bytes(scenario.memory_limit.count);
  summary->set_pipeline_stages(plan.pipeline_stages);
  summary->set_data_parallel(plan.data_parallel);
  const auto peaks = sequential_peak_memory(builder.schedule());
  for (std::uint32_t r = 0; r < peaks.size(); ++r) {
    summary->add_planned_peak_memory_bytes(peaks[r]);
    if (peaks[r] > scenario.memory_limit.count) {
      throw InputError(fmt::format("{}: {}: rank {}{} needs {} but the memory limit is {}; {}", scenario.source, strategy,
                                   r, where(r), format_bytes(Bytes(peaks[r])), format_bytes(scenario.memory_limit),
                                   advice));
    }
  }
  return builder.finish();
}

std::vector<std::uint64_t> sample_batch(const ResolvedScenario& scenario) {
  return sample_global_batch(*scenario.lengths, scenario.global_batch, scenario.max_length, scenario.over_max_length,
                             scenario.seed);
}

}  // namespace eppsim
