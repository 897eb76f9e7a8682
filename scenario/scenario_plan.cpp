#include "scenario/scenario_parts.h"

#include <cmath>
#include <cstdint>
#include <utility>

namespace eppsim::scenario_parts {

void resolve_plan(const proto::Plan& plan, ResolvedScenario* resolved, const FieldLocator& where) {
  if (resolved->workload.collective) {
    if (!plan.strategy().empty() && plan.strategy() != kCollectiveStrategy) {
      where.fail("plan.strategy", fmt::format("a collective benchmark (workload.collective) has no training strategy; "
                                              "leave plan.strategy unset (or {}), got {}",
                                              quote_string(kCollectiveStrategy), quote_string(plan.strategy())));
    }
    resolved->plan.strategy = std::string(kCollectiveStrategy);
  } else {
    resolved->plan.strategy = plan.strategy().empty() ? std::string(kDefaultStrategy) : plan.strategy();
  }
  const std::pair<std::string_view, std::uint64_t> degrees[] = {
      {"plan.packed_1f1b.pipeline_stages", plan.packed_1f1b().pipeline_stages()},
      {"plan.packed_1f1b.tensor_parallel", plan.packed_1f1b().tensor_parallel()},
      {"plan.packed_1f1b.context_parallel", plan.packed_1f1b().context_parallel()},
      {"plan.ulysses.sp_degree", plan.ulysses().sp_degree()},
      {"plan.seq1f1b.pipeline_stages", plan.seq1f1b().pipeline_stages()},
      {"plan.seq1f1b.slices", plan.seq1f1b().slices()},
      {"plan.seq1f1b.sp_degree", plan.seq1f1b().sp_degree()},
      {"plan.flexsp.extra_micro_batch_counts", plan.flexsp().extra_micro_batch_counts()},
      {"plan.flexsp.max_buckets", plan.flexsp().max_buckets()},
      {"plan.epp.pipeline_stages", plan.epp().pipeline_stages()},
      {"plan.epp.sp_degree", plan.epp().sp_degree()},
  };
  for (const auto& [path, value] : degrees) require_at_most(where, path, value, limits::kMaxParallelDegree);
  for (int i = 0; i < plan.epp().slice_counts_size(); ++i)
    require_at_most(where, fmt::format("plan.epp.slice_counts[{}]", i), plan.epp().slice_counts(i), limits::kMaxParallelDegree);
  require_at_most(where, "plan.seq1f1b.checkpointed_layers", plan.seq1f1b().checkpointed_layers(), limits::kMaxLayers);
  require_at_most(where, "plan.packed_1f1b.micro_batch_tokens", plan.packed_1f1b().micro_batch_tokens(),
                  limits::kMaxSequenceTokens);
  require_at_most(where, "plan.seq1f1b.chunk_tokens", plan.seq1f1b().chunk_tokens(), limits::kMaxSequenceTokens);
  if (plan.zero_stage() > 3) where.fail("plan.zero_stage", fmt::format("must be 0, 1, 2 or 3, got {}", plan.zero_stage()));
  double fraction = plan.memory_fraction();
  if (fraction == 0.0) fraction = 1.0;
  if (!(fraction > 0.0 && fraction <= 1.0))
    where.fail("plan.memory_fraction", fmt::format("must be in (0, 1] (0 means the default 1.0), got {}", fraction));
  const Bytes memory = resolved->cluster.gpu.memory;
  resolved->plan.memory_limit =
      fraction == 1.0 ? memory : Bytes(static_cast<std::uint64_t>(std::floor(static_cast<double>(memory.count) * fraction)));
}

}  // namespace eppsim::scenario_parts
