#include "traces/scenario_parts.h"

#include <cmath>
#include <utility>

namespace eppsim::scenario_parts {
namespace {

CalibratedFit resolve_fit(const proto::ComputeFit& fit, std::string_view path, const FieldLocator& where) {
  const std::pair<std::string_view, double> coefficients[] = {
      {"alpha1_s_per_token2", fit.alpha1_s_per_token2()},
      {"alpha2_s_per_token", fit.alpha2_s_per_token()},
      {"beta_s", fit.beta_s()},
  };
  bool any_positive = false;
  for (const auto& [name, value] : coefficients) {
    if (!(value >= 0.0) || !std::isfinite(value))
      where.fail(fmt::format("{}.{}", path, name), fmt::format("must be finite and >= 0, got {}", value));
    any_positive = any_positive || value > 0.0;
  }
  if (!any_positive)
    where.fail(path, "needs at least one positive coefficient (alpha1_s_per_token2, alpha2_s_per_token, beta_s)");
  return CalibratedFit{fit.alpha1_s_per_token2(), fit.alpha2_s_per_token(), fit.beta_s()};
}

double resolve_efficiency(double value, double fallback, std::string_view path, const FieldLocator& where) {
  if (value == 0.0) return fallback;
  if (!(value > 0.0 && value <= 1.0))
    where.fail(path, fmt::format("must be in (0, 1] (0 means the default {}), got {}", fallback, value));
  return value;
}

}  // namespace

std::shared_ptr<const ComputeCostModel> resolve_cost_model(const proto::CostModel& cost, const ResolvedScenario& resolved,
                                                           const FieldLocator& where) {
  const AnalyticEfficiency defaults;
  AnalyticEfficiency efficiency;
  efficiency.gemm = resolve_efficiency(cost.gemm_efficiency(), defaults.gemm, "cost_model.gemm_efficiency", where);
  efficiency.attention =
      resolve_efficiency(cost.attention_efficiency(), defaults.attention, "cost_model.attention_efficiency", where);
  if (cost.has_calibration()) {
    const CalibratedFit forward = resolve_fit(cost.calibration().forward(), "cost_model.calibration.forward", where);
    const CalibratedFit backward = resolve_fit(cost.calibration().backward(), "cost_model.calibration.backward", where);
    return std::make_shared<CalibratedComputeCost>(resolved.model, resolved.cluster.gpu, forward, backward, efficiency);
  }
  return std::make_shared<AnalyticComputeCost>(resolved.model, resolved.cluster.gpu, efficiency);
}

}  // namespace eppsim::scenario_parts
