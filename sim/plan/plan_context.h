#pragma once
// What a planner plans with: the model, where its ranks run, the cost model
// that prices them, the memory limit, and no more of the scenario (a planner's
// own options come resolved from the scenario's plan block:
// planner_registry.h).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/units.h"
#include "models/cost_model.h"
#include "models/transformer_spec.h"
#include "proto/schedule.pb.h"
#include "scenario/scenario.h"

namespace eppsim {

struct FlexSpModel;  // models/flexsp_preset.h

// Scores a candidate Schedule: its step time in seconds on the scenario's
// cluster. Planners cannot include sim/engine; sim/run.cpp passes one that runs
// the scenario's engine (simulated_step_seconds in sim/run.h).
using ScheduleEvaluator = std::function<double(const proto::Schedule& schedule, const ResolvedScenario& scenario)>;

struct PlanContext {
  // From the fully resolved `scenario`; with `evaluate`, `simulate` scores on
  // it. The context refers to the scenario's cost models (and, through
  // `simulate`, to the scenario): it must not outlive it.
  PlanContext(const ResolvedScenario& scenario, const ScheduleEvaluator& evaluate = {});  // NOLINT: implicit

  std::string source;  // the scenario's file (or "<embedded showcase>"), for messages
  std::string name;    // the scenario's name, written into the Schedule
  TransformerSpec model;
  // Placement: rank r runs on local GPU r % gpus_per_node of the
  // (r / gpus_per_node)-th live node.
  std::uint32_t gpus_per_node = 1;
  std::vector<std::uint32_t> live_nodes;
  // The cost model, bound to that placement: it prices every op (a compute
  // op's FLOPs, HBM traffic and time too).
  std::shared_ptr<const CostModel> cost;
  // cost_model.flexsp_preset's measured constants, when set (flexsp uses them).
  const FlexSpModel* flexsp_preset = nullptr;
  Bytes memory_limit;              // per GPU: its memory x plan.memory_fraction
  BytesPerSecond memory_bandwidth; // the GPU's HBM (the optimizer step's rate)
  std::uint64_t max_length = 0;    // workload.max_length
  // The engine's step time of a candidate Schedule (epp-flex checks its
  // choices with it); empty when the caller gave no evaluator.
  std::function<double(const proto::Schedule&)> simulate;

  std::uint32_t usable_gpus() const { return static_cast<std::uint32_t>(live_nodes.size()) * gpus_per_node; }
  std::uint32_t node_of_rank(std::uint32_t rank) const { return live_nodes[rank / gpus_per_node]; }
  std::uint32_t local_gpu_of(std::uint32_t rank) const { return rank % gpus_per_node; }
};

}  // namespace eppsim
