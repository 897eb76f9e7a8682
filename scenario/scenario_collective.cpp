// workload.collective: a collective micro-benchmark instead of a training step.
#include "scenario/scenario_parts.h"

#include <algorithm>
#include <cstdint>

namespace eppsim::scenario_parts {

void resolve_collective(const proto::CollectiveBenchmark& c, ResolvedScenario* resolved, const FieldLocator& where) {
  const proto::Workload& workload = resolved->proto.workload();
  const std::pair<std::string_view, bool> training_fields[] = {
      {"workload.lengths", workload.has_lengths()},
      {"workload.global_batch", workload.global_batch() != 0},
      {"workload.repeats", workload.repeats() != 0},
      {"workload.max_length", workload.max_length() != 0},
      {"workload.over_max_length", workload.over_max_length() != proto::OVER_MAX_LENGTH_UNSPECIFIED},
  };
  for (const auto& [path, set] : training_fields) {
    if (set) where.fail(path, "must be unset when workload.collective describes a collective benchmark instead of a training step");
  }
  CollectiveBenchmarkSpec spec;
  switch (c.kind()) {
    case proto::ALL_REDUCE:
    case proto::ALL_GATHER:
    case proto::REDUCE_SCATTER:
    case proto::ALL_TO_ALL:
    case proto::BROADCAST: spec.kind = c.kind(); break;
    default:
      where.fail("workload.collective.kind",
                 "must be one of ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, BROADCAST");
  }
  switch (c.algorithm()) {
    case proto::ALGORITHM_AUTO:
    case proto::RING:
    case proto::TREE:
    case proto::DIRECT:
    case proto::HIERARCHICAL: spec.algorithm = c.algorithm(); break;
    default:
      where.fail("workload.collective.algorithm",
                 fmt::format("unknown value {} (known: ALGORITHM_AUTO, RING, TREE, DIRECT, HIERARCHICAL)",
                             static_cast<int>(c.algorithm())));
  }
  if (c.bytes().empty()) where.fail("workload.collective.bytes", "must be set, e.g. \"1MiB\"");
  spec.size = parse_unit(where, "workload.collective.bytes", c.bytes(), parse_bytes);
  if (spec.size.count == 0) where.fail("workload.collective.bytes", fmt::format("must be > 0, got {}", quote_string(c.bytes())));
  if (spec.size.count > limits::kMaxCollectiveBytes) {
    where.fail("workload.collective.bytes", fmt::format("must be <= {} bytes (the bound of base/input_limits.h), got {}",
                                                        limits::kMaxCollectiveBytes, quote_string(c.bytes())));
  }
  require_at_most(where, "workload.collective.chunks", c.chunks(), limits::kMaxCollectiveOpsPerRank);
  require_at_most(where, "workload.collective.iterations", c.iterations(), limits::kMaxCollectiveOpsPerRank);
  if (std::uint64_t{std::max(c.chunks(), 1u)} * std::max(c.iterations(), 1u) > limits::kMaxCollectiveOpsPerRank) {
    where.fail("workload.collective.iterations",
               fmt::format("chunks x iterations must be <= {} ops per rank (the bound of base/input_limits.h), got "
                           "{} x {}", limits::kMaxCollectiveOpsPerRank, c.chunks(), c.iterations()));
  }
  spec.chunks = c.chunks() == 0 ? 1 : c.chunks();
  if (spec.chunks > spec.size.count) {
    where.fail("workload.collective.chunks",
               fmt::format("must be at most the {} bytes (every chunk carries at least one byte), got {}", spec.size.count,
                           spec.chunks));
  }
  spec.stride = c.stride() == 0 ? 1 : c.stride();
  const std::uint32_t usable = resolved->usable_gpus();
  const std::uint32_t fits = (usable + spec.stride - 1) / spec.stride;  // members 0, stride, ... below `usable`
  spec.group_size = c.group_size() == 0 ? fits : c.group_size();
  if (spec.group_size < 2 || spec.group_size > fits) {
    where.fail(c.group_size() == 0 ? "workload.collective.stride" : "workload.collective.group_size",
               fmt::format("the group needs 2 to {} members ({} usable GPUs at a stride of {}), got {}", fits, usable,
                           spec.stride, spec.group_size));
  }
  spec.iterations = c.iterations() == 0 ? 1 : c.iterations();
  resolved->workload.collective = spec;
}

}  // namespace eppsim::scenario_parts
