#include "traces/scenario_parts.h"

#include <cmath>
#include <utility>

#include "models/flexsp_preset.h"
#include "traces/cost_model_factory.h"

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

// Which FlexSP model's measured constants apply (cost_model.flexsp_preset);
// nullptr when none is named.
const FlexSpModel* resolve_flexsp_preset(const std::string& name, const TransformerSpec& model,
                                         const FieldLocator& where) {
  if (name.empty()) return nullptr;
  const FlexSpModel* preset = find_flexsp_model(name);
  if (preset == nullptr) {
    where.fail("cost_model.flexsp_preset",
               fmt::format("unknown FlexSP preset {} (known: {})", quote_string(name),
                           join_names(flexsp_models(), [](const FlexSpModel& m) { return std::string(m.name); })));
  }
  if (preset->layers != model.layers || preset->hidden_size != model.hidden_size) {
    where.fail("cost_model.flexsp_preset",
               fmt::format("FlexSP preset {} measured a model of {} layers and hidden size {}, but the model has {} "
                           "layers and hidden size {}",
                           quote_string(name), preset->layers, preset->hidden_size, model.layers, model.hidden_size));
  }
  return preset;
}

}  // namespace

void resolve_cost_model(const proto::CostModel& cost, ResolvedScenario* resolved, const FieldLocator& where) {
  const AnalyticEfficiency defaults;
  AnalyticEfficiency efficiency;
  efficiency.gemm = resolve_efficiency(cost.gemm_efficiency(), defaults.gemm, "cost_model.gemm_efficiency", where);
  efficiency.attention =
      resolve_efficiency(cost.attention_efficiency(), defaults.attention, "cost_model.attention_efficiency", where);
  proto::CostModel::Compute compute = cost.compute();
  if (compute == proto::CostModel::COMPUTE_DEFAULT)
    compute = cost.has_calibration() ? proto::CostModel::CALIBRATED : proto::CostModel::ROOFLINE;
  if (compute != proto::CostModel::ROOFLINE && compute != proto::CostModel::CALIBRATED)
    where.fail("cost_model.compute", fmt::format("unknown value {} (known: ROOFLINE, CALIBRATED)", static_cast<int>(compute)));
  if (compute == proto::CostModel::CALIBRATED) {
    if (!cost.has_calibration())
      where.fail("cost_model.compute", "CALIBRATED needs cost_model.calibration (per-layer forward and backward fits)");
    const CalibratedFit forward = resolve_fit(cost.calibration().forward(), "cost_model.calibration.forward", where);
    const CalibratedFit backward = resolve_fit(cost.calibration().backward(), "cost_model.calibration.backward", where);
    resolved->compute_cost =
        std::make_shared<CalibratedComputeCost>(resolved->model, resolved->cluster.gpu, forward, backward, efficiency);
  } else {
    resolved->compute_cost = std::make_shared<AnalyticComputeCost>(resolved->model, resolved->cluster.gpu, efficiency);
  }

  proto::CostModel::Network network = cost.network();
  if (network == proto::CostModel::NETWORK_DEFAULT)
    network = resolved->topology ? proto::CostModel::ROUTED : proto::CostModel::CLOSED_FORM;
  if (network != proto::CostModel::CLOSED_FORM && network != proto::CostModel::ROUTED)
    where.fail("cost_model.network", fmt::format("unknown value {} (known: CLOSED_FORM, ROUTED)", static_cast<int>(network)));
  if (network == proto::CostModel::ROUTED && !resolved->topology)
    where.fail("cost_model.network", "ROUTED needs cluster.topology (the links to route over); use CLOSED_FORM");
  resolved->network_pricing = network == proto::CostModel::ROUTED ? NetworkPricing::Routed : NetworkPricing::ClosedForm;

  resolved->flexsp_preset = resolve_flexsp_preset(cost.flexsp_preset(), resolved->model, where);
  resolved->cost = make_cost_model(*resolved, default_placement(*resolved, resolved->usable_gpus()));
}

}  // namespace eppsim::scenario_parts
