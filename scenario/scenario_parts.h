#pragma once
// Internal to traces/scenario*.cpp: the resolution of each part of a scenario,
// shared by the staged resolutions of scenario/scenario.cpp. Not for other code.
#include <cmath>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/input_limits.h"
#include "scenario/field_locator.h"
#include "scenario/scenario.h"

namespace eppsim::scenario_parts {

// "a, b, c": name(item) for each item of `range`.
template <typename Range, typename Name>
std::string join_names(const Range& range, Name name) {
  std::string joined;
  for (const auto& item : range) {
    if (!joined.empty()) joined += ", ";
    joined += name(item);
  }
  return joined;
}

inline std::string join(std::span<const std::string_view> names) {
  return join_names(names, [](std::string_view n) { return std::string(n); });
}

// Parses a unit string with `parse`, turning the unit parser's error into one
// that names the field.
template <typename Parse>
auto parse_unit(const FieldLocator& where, std::string_view path, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const InputError& e) {
    where.fail(path, e.what());
  }
}

template <typename Quantity>
void require_positive(const FieldLocator& where, std::string_view path, Quantity quantity, const std::string& text) {
  if (!(quantity.value > 0.0)) where.fail(path, fmt::format("must be > 0, got {}", quote_string(text)));
}

// An upper bound of base/input_limits.h, checked before anything is sized by the value.
template <typename Value, typename Bound>
void require_at_most(const FieldLocator& where, std::string_view path, Value value, Bound bound) {
  if (value > bound) where.fail(path, fmt::format("must be <= {} (the bound of base/input_limits.h), got {}", bound, value));
}

// A lower bound of base/input_limits.h on a rate (finite, too: a rate of
// nothing per second, or an infinite one, makes simulated time unrepresentable).
inline void require_at_least(const FieldLocator& where, std::string_view path, double value, double bound,
                             std::string_view unit, const std::string& text) {
  if (!(value >= bound) || !std::isfinite(value)) {
    where.fail(path, fmt::format("must be finite and >= {} {} (the bound of base/input_limits.h), got {}", bound, unit,
                                 quote_string(text)));
  }
}

// model: the preset or the custom shape, checked.
TransformerSpec resolve_model(const proto::Model& m, const FieldLocator& where);

// cluster: nodes, GPUs and the simple links.
ClusterSpec resolve_cluster(const proto::Cluster& c, const FieldLocator& where);
// cluster.failures against the cluster's nodes.
FailureConfig resolve_failures(const proto::Failures& f, const ClusterSpec& cluster, const FieldLocator& where);

// The topology, the networks to compare and the prices; fills the simple
// cluster's links from the topology where the scenario left them out.
void resolve_network(const proto::Cluster& c, ResolvedScenario* resolved, const FieldLocator& where);

// workload: the length source, global_batch, max_length and over_max_length.
void resolve_workload(const proto::Workload& workload, const std::filesystem::path& base_dir, ResolvedScenario* resolved,
                      const FieldLocator& where);

// workload.collective (a collective micro-benchmark): its kind, bytes,
// algorithm, chunks, group and iterations, checked against the usable GPUs; the
// training fields of the workload must be unset.
void resolve_collective(const proto::CollectiveBenchmark& collective, ResolvedScenario* resolved,
                        const FieldLocator& where);

// plan: the fields every strategy shares (the strategy's name, zero_stage,
// memory_fraction into memory_limit); the strategy's own options are its planner's.
void resolve_plan(const proto::Plan& plan, ResolvedScenario* resolved, const FieldLocator& where);

// cost_model: the calibration (inline, or cost_model.calibration_file relative
// to `base_dir`), the compute model over the resolved model and GPU, how the
// network is priced and the calibration's collective fits, FlexSP's measured
// constants, and the CostModel of the default placement
// (scenario/cost_model_factory.h).
void resolve_cost_model(const proto::CostModel& cost, const std::filesystem::path& base_dir, ResolvedScenario* resolved,
                        const FieldLocator& where);

}  // namespace eppsim::scenario_parts
