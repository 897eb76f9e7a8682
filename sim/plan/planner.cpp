#include "sim/plan/planner.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "sim/plan/schedule_builder.h"
#include "schedule/identical_replicas.h"
#include "schedule/executor/simulated_ns.h"

namespace eppsim {

proto::ComputeOp adam_step_op(const PlanContext& sc, double shard_params, std::uint32_t stage,
                              std::uint32_t first_layer, std::uint32_t layer_count) {
  proto::ComputeOp optimizer;
  optimizer.set_phase(proto::OPTIMIZER);
  optimizer.set_stage(stage);
  optimizer.set_first_layer(first_layer);
  optimizer.set_layer_count(layer_count);
  const auto traffic = static_cast<std::uint64_t>(shard_params * 28.0);
  optimizer.set_flops(shard_params * 12.0);
  optimizer.set_memory_traffic_bytes(traffic);
  const double seconds = static_cast<double>(traffic) / sc.memory_bandwidth.value;
  optimizer.set_estimated_duration_ns(
      to_ns(seconds, [&] { return fmt::format("{}: plan: the optimizer step of stage {}", sc.source, stage); }));
  return optimizer;
}

void add_stage_checkpointing(proto::PlanDecisions* decisions, std::uint32_t stage, std::uint32_t layers,
                             std::uint32_t chunks, std::uint32_t checkpointed_layer_chunks,
                             std::uint32_t most_checkpointed_layers) {
  auto* c = decisions->add_checkpointing();
  c->set_stage(stage);
  c->set_layers(layers);
  c->set_chunks(chunks);
  c->set_checkpointed_layer_chunks(checkpointed_layer_chunks);
  c->set_most_checkpointed_layers(most_checkpointed_layers);
  decisions->set_checkpointed_layer_chunks(decisions->checkpointed_layer_chunks() + checkpointed_layer_chunks);
  decisions->set_layer_chunks(decisions->layer_chunks() + layers * chunks);
}

proto::Schedule finish_plan(ScheduleBuilder& builder, const PlanContext& scenario, const PlanSummary& plan,
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
  summary->mutable_decisions()->set_ranks(builder.schedule().num_ranks());
  const auto own_peaks = sequential_peak_memory(builder.schedule());
  const auto source = source_ranks(builder.schedule());  // a rank of an identical replica: its copy's
  for (std::uint32_t r = 0; r < own_peaks.size(); ++r) {
    const auto peak = own_peaks[source[r]];
    summary->add_planned_peak_memory_bytes(peak);
    if (peak > scenario.memory_limit.count) {
      throw InputError(fmt::format("{}: {}: rank {}{} needs {} but the memory limit is {}; {}", scenario.source, strategy,
                                   r, where(r), format_bytes(Bytes(peak)), format_bytes(scenario.memory_limit),
                                   advice));
    }
  }
  return builder.finish();
}

std::vector<std::uint64_t> sample_batch(const ResolvedScenario& scenario) {
  if (scenario.workload.collective) {
    scenario.where().fail("workload.collective",
                          "describes a collective benchmark, not a training step: there is no batch for a training "
                          "strategy to plan (use `eppsim run`)");
  }
  const ScenarioWorkload& w = scenario.workload;
  const auto drawn = sample_global_batch(*w.lengths, w.global_batch / w.repeats, w.max_length, w.over_max_length, w.seed);
  std::vector<std::uint64_t> batch;
  batch.reserve(w.global_batch);
  for (std::uint32_t k = 0; k < w.repeats; ++k) batch.insert(batch.end(), drawn.begin(), drawn.end());
  return batch;
}

}  // namespace eppsim
