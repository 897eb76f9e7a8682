#include "sim/plan/flexsp.h"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/units.h"
#include "sim/plan/zero3_layers.h"

// plan.flexsp resolved: each option's range and default (sim/plan/flexsp.h).
namespace eppsim {
namespace {

// FlexSP's released train_dist.py checkpoints the MLP block of 12 of its 32
// layers when it runs on 32 GPUs or more: plan.flexsp.recomputed_mlp_fraction's
// default.
constexpr double kReleasedCodeRecomputedMlpFraction = 12.0 / 32.0;
constexpr std::uint32_t kReleasedCodeRecomputeGpus = 32;

}  // namespace

FlexSpOptions resolve_flexsp_options(const ResolvedScenario& resolved) {
  const FieldLocator& where = resolved.where();
  const proto::FlexSPOptions& options = resolved.proto.plan().flexsp();
  const double limit = options.solver_time_limit_s();
  if (!(limit >= 0.0) || !std::isfinite(limit)) {
    where.fail("plan.flexsp.solver_time_limit_s", fmt::format("must be >= 0 (0 means the default 10 s), got {}", limit));
  }
  const double gap = options.relative_gap();
  if (!(gap >= 0.0 && gap < 1.0)) {
    where.fail("plan.flexsp.relative_gap", fmt::format("must be in [0, 1) (0 means the default 0.01), got {}", gap));
  }
  if (options.solver_node_limit() > 10'000'000) {
    where.fail("plan.flexsp.solver_node_limit",
               fmt::format("must be <= 10000000 (0 means the default 500), got {}", options.solver_node_limit()));
  }
  if (options.max_buckets() > 4096) {
    where.fail("plan.flexsp.max_buckets", fmt::format("must be <= 4096 (0 means the default 16), got {}", options.max_buckets()));
  }
  if (options.extra_micro_batch_counts() > 64) {
    where.fail("plan.flexsp.extra_micro_batch_counts",
               fmt::format("must be <= 64 (0 means the default 4), got {}", options.extra_micro_batch_counts()));
  }
  const std::uint32_t gpus = resolved.usable_gpus();
  if (gpus != 1 && gpus % 2 != 0) {
    where.fail("cluster.nodes", fmt::format("flexsp needs an even number of GPUs (power-of-two SP groups), got {}", gpus));
  }
  const bool preset = !resolved.proto.cost_model().flexsp_preset().empty();
  const double mlp = options.has_recomputed_mlp_fraction() ? options.recomputed_mlp_fraction()
                     : (preset || gpus < kReleasedCodeRecomputeGpus) ? 0.0
                                                                     : kReleasedCodeRecomputedMlpFraction;
  if (!(mlp >= 0.0 && mlp <= 1.0)) {
    where.fail("plan.flexsp.recomputed_mlp_fraction", fmt::format("must be in [0, 1], got {}", mlp));
  }
  if (mlp > 0.0 && preset) {
    where.fail("plan.flexsp.recomputed_mlp_fraction",
               "must be 0 with cost_model.flexsp_preset, whose measured constants already hold FlexSP's recomputation");
  }
  FlexSpOptions out;
  out.recomputed_mlp_layers = static_cast<std::uint32_t>(std::lround(mlp * resolved.model.layers));
  if (options.solver_time_limit_s() > 0) out.time_limit_s = options.solver_time_limit_s();
  if (options.extra_micro_batch_counts() > 0) out.extra = options.extra_micro_batch_counts();
  if (options.max_buckets() > 0) out.max_buckets = options.max_buckets();
  if (options.relative_gap() > 0) out.gap = options.relative_gap();
  if (options.solver_node_limit() > 0) out.node_limit = options.solver_node_limit();
  if (!options.planning_memory_cap().empty()) {
    try {
      out.planning_memory_cap = parse_bytes(options.planning_memory_cap());
    } catch (const InputError& e) {
      where.fail("plan.flexsp.planning_memory_cap", e.what());
    }
    if (out.planning_memory_cap->count == 0) {
      where.fail("plan.flexsp.planning_memory_cap",
                 fmt::format("must be > 0 (unset: the GPU's memory times plan.memory_fraction), got \"{}\"",
                             options.planning_memory_cap()));
    }
  }
  out.zero3 = resolve_zero3_options(resolved);
  return out;
}

}  // namespace eppsim
