#include "scenario/scenario_parts.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <tuple>
#include <algorithm>
#include <vector>
#include <utility>

#include "models/flexsp_preset.h"
#include "base/log.h"
#include "models/shaped_compute_cost.h"
#include "scenario/cost_model_factory.h"
#include "base/proto_io.h"

namespace eppsim::scenario_parts {
namespace {

// Reports a broken rule of a calibration field: inline, as the scenario's
// cost_model.calibration.FIELD; from a file, as cost_model.calibration_file
// with the file and the field inside it.
class CalibrationLocator {
 public:
  CalibrationLocator(const FieldLocator& where, std::string file) : where_(where), file_(std::move(file)) {}
  [[noreturn]] void fail(std::string_view field, std::string_view rule) const {
    if (file_.empty()) where_.fail(fmt::format("cost_model.calibration.{}", field), rule);
    where_.fail("cost_model.calibration_file", fmt::format("{}: {}: {}", file_, field, rule));
  }

 private:
  const FieldLocator& where_;
  std::string file_;
};

CalibratedFit resolve_fit(const proto::ComputeFit& fit, std::string_view path, const CalibrationLocator& where) {
  const std::pair<std::string_view, double> coefficients[] = {
      {"alpha1_s_per_token2", fit.alpha1_s_per_token2()},
      {"alpha2_s_per_token", fit.alpha2_s_per_token()},
      {"beta_s", fit.beta_s()},
      {"gamma_s_per_extra_segment", fit.gamma_s_per_extra_segment()},
  };
  bool any_positive = false;
  for (const auto& [name, value] : coefficients) {
    if (!(value >= 0.0) || !std::isfinite(value))
      where.fail(fmt::format("{}.{}", path, name), fmt::format("must be finite and >= 0, got {}", value));
    any_positive = any_positive || value > 0.0;
  }
  if (!any_positive)
    where.fail(path, "needs at least one positive coefficient (alpha1_s_per_token2, alpha2_s_per_token, beta_s)");
  return CalibratedFit{fit.alpha1_s_per_token2(), fit.alpha2_s_per_token(), fit.beta_s(),
                       fit.gamma_s_per_extra_segment()};
}

// The optional kernel fits, each pass's where the calibration has it; a head or
// attention fit of one pass needs the other pass's.
CalibratedKernelFits resolve_kernel_fits(const proto::Calibration& calibration, const CalibrationLocator& where) {
  CalibratedKernelFits kernels;
  if (calibration.has_forward_head() != calibration.has_backward_head()) {
    where.fail(calibration.has_forward_head() ? "backward_head" : "forward_head",
               "is missing: the LM head's fits come in pairs (forward_head and backward_head)");
  }
  if (calibration.has_forward_attention() != calibration.has_backward_attention()) {
    where.fail(calibration.has_forward_attention() ? "backward_attention" : "forward_attention",
               "is missing: the attention fits come in pairs (forward_attention and backward_attention)");
  }
  if (calibration.has_forward_head()) {
    kernels.forward_head = resolve_fit(calibration.forward_head(), "forward_head", where);
    kernels.backward_head = resolve_fit(calibration.backward_head(), "backward_head", where);
  }
  if (calibration.has_forward_attention()) {
    kernels.forward_attention = resolve_fit(calibration.forward_attention(), "forward_attention", where);
    kernels.backward_attention = resolve_fit(calibration.backward_attention(), "backward_attention", where);
  }
  return kernels;
}

std::vector<CommFit> resolve_comm_fits(const proto::Calibration& calibration, const CalibrationLocator& where) {
  std::vector<CommFit> fits;
  for (int i = 0; i < calibration.collectives_size(); ++i) {
    const proto::CollectiveFit& c = calibration.collectives(i);
    const std::string path = fmt::format("collectives[{}]", i);
    const auto kind = parse_comm_kind(c.kind());
    if (!kind)
      where.fail(path + ".kind", fmt::format("unknown kind {} (known: {})", quote_string(c.kind()), comm_kind_names()));
    if (c.group_size() < 2) where.fail(path + ".group_size", fmt::format("must be >= 2, got {}", c.group_size()));
    if (*kind == CommKind::SendRecv && c.group_size() != 2)
      where.fail(path + ".group_size", fmt::format("must be 2 for send-recv, got {}", c.group_size()));
    if (!(c.latency_s() >= 0.0) || !std::isfinite(c.latency_s()))
      where.fail(path + ".latency_s", fmt::format("must be finite and >= 0, got {}", c.latency_s()));
    if (!(c.bandwidth_bps() > 0.0) || !std::isfinite(c.bandwidth_bps()))
      where.fail(path + ".bandwidth_Bps", fmt::format("must be finite and > 0, got {}", c.bandwidth_bps()));
    for (const CommFit& f : fits) {
      if (f.kind == *kind && f.group_size == c.group_size() && f.crosses_nodes == c.crosses_nodes())
        where.fail(path, fmt::format("a second {} fit over {} ranks with crosses_nodes {}", c.kind(), c.group_size(),
                                     c.crosses_nodes()));
    }
    fits.push_back({*kind, c.group_size(), c.crosses_nodes(), Seconds(c.latency_s()), BytesPerSecond(c.bandwidth_bps())});
  }
  return fits;
}

// The calibration the scenario names: inline (cost_model.calibration) or read
// from cost_model.calibration_file relative to `base_dir`; empty when neither.
// `file` receives the resolved file's path (empty when inline).
proto::Calibration load_calibration(const proto::CostModel& cost, const std::filesystem::path& base_dir,
                                    const FieldLocator& where, std::string* file) {
  if (cost.calibration_file().empty()) return cost.calibration();
  if (cost.has_calibration())
    where.fail("cost_model.calibration_file", "set either calibration_file or an inline calibration, not both");
  std::filesystem::path path(cost.calibration_file());
  if (path.is_relative()) path = base_dir / path;
  *file = path.string();
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    where.fail("cost_model.calibration_file",
               fmt::format("no such file {} (relative paths resolve against {})", path.string(), base_dir.string()));
  }
  proto::Calibration calibration;
  try {
    read_message(path, &calibration);
  } catch (const InputError& e) {
    where.fail("cost_model.calibration_file", e.what());
  }
  return calibration;
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

// A duration of cost_model.shaped: empty is `fallback`; else parsed ("4us"),
// at most limits::kMaxLatencySeconds.
Seconds resolve_shaped_duration(const std::string& text, Seconds fallback, std::string_view path,
                                const FieldLocator& where) {
  if (text.empty()) return fallback;
  const Seconds value = parse_unit(where, path, text, parse_seconds);
  if (!(value.value <= limits::kMaxLatencySeconds)) {
    where.fail(path, fmt::format("must be <= {} s (the bound of base/input_limits.h), got {}", limits::kMaxLatencySeconds,
                                 quote_string(text)));
  }
  return value;
}

// cost_model.shaped over the GPU's defaults (default_shaped_params); set only
// with compute SHAPED.
ShapedComputeParams resolve_shaped_compute(const proto::CostModel& cost, const GpuSpec& gpu, const FieldLocator& where) {
  const proto::ShapedCompute& shaped = cost.shaped();
  const ShapedComputeParams defaults = default_shaped_params(gpu);
  ShapedComputeParams p = defaults;
  if (shaped.has_fixed_costs()) p.fixed_costs = shaped.fixed_costs();
  p.kernel_launch =
      resolve_shaped_duration(shaped.kernel_launch(), defaults.kernel_launch, "cost_model.shaped.kernel_launch", where);
  p.layer_overhead =
      resolve_shaped_duration(shaped.layer_overhead(), defaults.layer_overhead, "cost_model.shaped.layer_overhead", where);
  p.chunk_overhead =
      resolve_shaped_duration(shaped.chunk_overhead(), defaults.chunk_overhead, "cost_model.shaped.chunk_overhead", where);
  p.gemm_tile_efficiency = resolve_efficiency(shaped.gemm_tile_efficiency(), defaults.gemm_tile_efficiency,
                                              "cost_model.shaped.gemm_tile_efficiency", where);
  p.attention_efficiency = resolve_efficiency(shaped.attention_efficiency(), defaults.attention_efficiency,
                                              "cost_model.shaped.attention_efficiency", where);
  if (shaped.attention_half_length() != 0) {
    require_at_most(where, "cost_model.shaped.attention_half_length", shaped.attention_half_length(),
                    limits::kMaxSequenceTokens);
    p.attention_half_length_tokens = static_cast<double>(shaped.attention_half_length());
  }
  return p;
}

// cost_model.interference: per class of traffic, each factor set in the
// scenario (finite, >= 1, at every size), else the calibration's
// InterferenceFit of the class (its points by size when it has them, else its
// one factor; a fitted factor below 1, overlap measured as no slower, counts
// as 1: the engines only slow), else the published default
// (models/interference.h).
Interference resolve_interference(const proto::CostModel& cost, const proto::Calibration& calibration,
                                  const FieldLocator& where, const CalibrationLocator& calibration_where) {
  const proto::Interference& in = cost.interference();
  const std::pair<std::string_view, const proto::InterferenceFactors*> classes[kTrafficClasses] = {
      {"point_to_point", &in.point_to_point()},
      {"intra_node_collective", &in.intra_node_collective()},
      {"inter_node_collective", &in.inter_node_collective()},
  };
  const bool has[kTrafficClasses] = {in.has_point_to_point(), in.has_intra_node_collective(),
                                     in.has_inter_node_collective()};
  Interference out;
  out.enabled = !in.has_enabled() || in.enabled();
  if (!out.enabled) {
    for (std::size_t c = 0; c < kTrafficClasses; ++c) {
      if (has[c])
        where.fail(fmt::format("cost_model.interference.{}", classes[c].first),
                   "sets factors while cost_model.interference.enabled is false (set enabled: true to use them)");
    }
    return out;
  }
  bool calibrated[kTrafficClasses] = {};
  for (int i = 0; i < calibration.interference_size(); ++i) {
    const proto::InterferenceFit& fit = calibration.interference(i);
    const std::string path = fmt::format("interference[{}]", i);
    std::size_t c = 0;
    while (c < kTrafficClasses && traffic_class_name(static_cast<TrafficClass>(c)) != fit.traffic()) ++c;
    if (c == kTrafficClasses) {
      calibration_where.fail(path + ".traffic",
                             fmt::format("unknown class {} (known: point-to-point, intra-node-collective, "
                                         "inter-node-collective)",
                                         quote_string(fit.traffic())));
    }
    if (calibrated[c]) calibration_where.fail(path + ".traffic", fmt::format("a second fit of {}", fit.traffic()));
    calibrated[c] = true;
    // A calibrated factor: finite and > 0; below 1 it counts as 1.
    const auto factor_of = [&](const std::string& field, double value) {
      if (!(value > 0.0) || !std::isfinite(value))
        calibration_where.fail(field, fmt::format("must be finite and > 0, got {}", value));
      return std::max(1.0, value);
    };
    InterferenceFactors one{factor_of(path + ".compute_slowdown", fit.compute_slowdown()),
                            factor_of(path + ".comm_slowdown", fit.comm_slowdown())};
    std::vector<InterferenceAtSize>& points = out.by_size[c];
    points = {InterferenceAtSize{0.0, one}};
    if (fit.by_size_size() > 0) points.clear();
    for (int k = 0; k < fit.by_size_size(); ++k) {
      const proto::InterferenceAtSize& p = fit.by_size(k);
      const std::string at = fmt::format("{}.by_size[{}]", path, k);
      if (p.bytes() == 0) calibration_where.fail(at + ".bytes", "must be > 0");
      if (k > 0 && p.bytes() <= fit.by_size(k - 1).bytes()) {
        calibration_where.fail(at + ".bytes", fmt::format("must be above the previous point's {}, got {}",
                                                          fit.by_size(k - 1).bytes(), p.bytes()));
      }
      points.push_back({static_cast<double>(p.bytes()), {factor_of(at + ".compute_slowdown", p.compute_slowdown()),
                                                         factor_of(at + ".comm_slowdown", p.comm_slowdown())}});
    }
  }
  // The scenario's factors hold at every size.
  for (std::size_t c = 0; c < kTrafficClasses; ++c) {
    for (auto [name, value, factor] :
         {std::tuple{"compute_slowdown", classes[c].second->compute_slowdown(), &InterferenceFactors::compute_slowdown},
          std::tuple{"comm_slowdown", classes[c].second->comm_slowdown(), &InterferenceFactors::comm_slowdown}}) {
      if (value == 0.0) continue;  // unset
      if (!(value >= 1.0) || !std::isfinite(value)) {
        where.fail(fmt::format("cost_model.interference.{}.{}", classes[c].first, name),
                   fmt::format("must be finite and >= 1 (0 or unset: calibrated or default), got {}", value));
      }
      for (InterferenceAtSize& p : out.by_size[c]) p.factors.*factor = value;
    }
  }
  return out;
}

// cost_model.all_to_all_efficiency: degrees >= 2, none listed twice,
// efficiencies in (0, 1].
std::vector<AllToAllEfficiencyPoint> resolve_all_to_all_efficiency(const proto::CostModel& cost,
                                                                   const FieldLocator& where) {
  std::vector<AllToAllEfficiencyPoint> points;
  for (int i = 0; i < cost.all_to_all_efficiency_size(); ++i) {
    const proto::AllToAllEfficiency& e = cost.all_to_all_efficiency(i);
    const std::string path = fmt::format("cost_model.all_to_all_efficiency[{}]", i);
    if (e.degree() < 2) where.fail(path + ".degree", fmt::format("must be >= 2, got {}", e.degree()));
    for (std::size_t j = 0; j < points.size(); ++j) {
      if (points[j].degree == e.degree())
        where.fail(path + ".degree", fmt::format("degree {} is listed twice (also at [{}])", e.degree(), j));
    }
    if (!(e.efficiency() > 0.0 && e.efficiency() <= 1.0))
      where.fail(path + ".efficiency", fmt::format("must be in (0, 1], got {}", e.efficiency()));
    points.push_back({e.degree(), e.efficiency()});
  }
  return points;
}

}  // namespace

void resolve_cost_model(const proto::CostModel& cost, const std::filesystem::path& base_dir, ResolvedScenario* resolved,
                        const FieldLocator& where) {
  const AnalyticEfficiency defaults;
  AnalyticEfficiency efficiency;
  efficiency.gemm = resolve_efficiency(cost.gemm_efficiency(), defaults.gemm, "cost_model.gemm_efficiency", where);
  efficiency.attention =
      resolve_efficiency(cost.attention_efficiency(), defaults.attention, "cost_model.attention_efficiency", where);
  std::string calibration_file;
  const proto::Calibration calibration = load_calibration(cost, base_dir, where, &calibration_file);
  const CalibrationLocator calibration_where(where, calibration_file);
  const bool has_compute_fits = calibration.has_forward() || calibration.has_backward();
  proto::CostModel::Compute compute = cost.compute();
  // A collective benchmark has no model and runs no compute: the roofline,
  // which needs no shapes, stands in.
  const bool has_model = resolved->model.hidden_size > 0 && resolved->model.attention_heads > 0;
  if (compute == proto::CostModel::COMPUTE_DEFAULT) {
    compute = has_compute_fits ? proto::CostModel::CALIBRATED
              : has_model      ? proto::CostModel::SHAPED
                               : proto::CostModel::ROOFLINE;
  }
  if (compute != proto::CostModel::ROOFLINE && compute != proto::CostModel::CALIBRATED &&
      compute != proto::CostModel::SHAPED) {
    where.fail("cost_model.compute",
               fmt::format("unknown value {} (known: ROOFLINE, CALIBRATED, SHAPED)", static_cast<int>(compute)));
  }
  if (cost.has_shaped() && compute != proto::CostModel::SHAPED)
    where.fail("cost_model.shaped", "is set, but cost_model.compute is not SHAPED (set compute: SHAPED, or remove it)");
  auto ingredients = std::make_shared<CostModelIngredients>();
  if (compute == proto::CostModel::CALIBRATED) {
    if (!has_compute_fits) {
      where.fail("cost_model.compute",
                 "CALIBRATED needs cost_model.calibration or cost_model.calibration_file with forward and backward fits");
    }
    if (!calibration.model().empty() && !resolved->model.name.empty() && calibration.model() != resolved->model.name) {
      logging::warn("scenario", "{}: the calibration's compute fits were measured on model {}, the scenario's model is {}",
                    where.source(), quote_string(calibration.model()), quote_string(resolved->model.name));
    }
    const CalibratedFit forward = resolve_fit(calibration.forward(), "forward", calibration_where);
    const CalibratedFit backward = resolve_fit(calibration.backward(), "backward", calibration_where);
    resolved->cost.compute = std::make_shared<CalibratedComputeCost>(
        resolved->model, resolved->cluster.gpu, forward, backward, efficiency,
        resolve_kernel_fits(calibration, calibration_where));
  } else if (compute == proto::CostModel::SHAPED) {
    ingredients->shaped_compute = resolve_shaped_compute(cost, resolved->cluster.gpu, where);
    resolved->cost.compute =
        std::make_shared<ShapedComputeCost>(resolved->model, resolved->cluster.gpu, *ingredients->shaped_compute);
  } else {
    resolved->cost.compute = std::make_shared<AnalyticComputeCost>(resolved->model, resolved->cluster.gpu, efficiency);
  }
  ingredients->comm_fits = resolve_comm_fits(calibration, calibration_where);
  resolved->cost.interference = resolve_interference(cost, calibration, where, calibration_where);

  proto::CostModel::Network network = cost.network();
  if (network == proto::CostModel::NETWORK_DEFAULT)
    network = resolved->cluster.topology ? proto::CostModel::ROUTED : proto::CostModel::CLOSED_FORM;
  if (network != proto::CostModel::CLOSED_FORM && network != proto::CostModel::ROUTED)
    where.fail("cost_model.network", fmt::format("unknown value {} (known: CLOSED_FORM, ROUTED)", static_cast<int>(network)));
  if (network == proto::CostModel::ROUTED && !resolved->cluster.topology)
    where.fail("cost_model.network", "ROUTED needs cluster.topology (the links to route over); use CLOSED_FORM");
  ingredients->network_pricing = network == proto::CostModel::ROUTED ? NetworkPricing::Routed : NetworkPricing::ClosedForm;
  ingredients->all_to_all_efficiency = resolve_all_to_all_efficiency(cost, where);

  resolved->cost.flexsp_preset = resolve_flexsp_preset(cost.flexsp_preset(), resolved->model, where);
  resolved->cost.ingredients = std::move(ingredients);
  resolved->cost.model = make_cost_model(*resolved, default_placement(*resolved, resolved->usable_gpus()));
}

}  // namespace eppsim::scenario_parts
