#include "models/flexsp_preset.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "base/errors.h"
#include "models/memory_model.h"
#include "models/preset_name.h"

namespace eppsim {
namespace {

constexpr double kMs = 1e-3;
constexpr double kMiB = 1048576.0;
constexpr double kGiBParams = 1073741824.0;  // FlexSP's "B" of parameters = 2^30

// flexsp.md section 1.1 (Hetu-Galvatron branch flexsp, optimizer_param_dict).
constexpr std::array<FlexSpModel, 3> kModels = {{
    {"gpt-7b", "gpt-6.7b", 32, 4096, 5.128e-6 * kMs, 0.1840 * kMs, Seconds(629.4 * kMs), 4.480 * kMiB,
     7.12 * kGiBParams, 7.85 * kGiBParams},
    {"gpt-13b", "gpt-13b", 40, 5120, 9.285e-6 * kMs, 0.3060 * kMs, Seconds(1132.6 * kMs), 4.220 * kMiB,
     13.12 * kGiBParams, 14.03 * kGiBParams},
    {"gpt-30b", "gpt-30b", 60, 6656, 15.43e-6 * kMs, 0.8036 * kMs, Seconds(2789.4 * kMs), 3.417 * kMiB,
     31.53 * kGiBParams, 32.72 * kGiBParams},
}};

}  // namespace

std::span<const FlexSpModel> flexsp_models() { return kModels; }

const FlexSpModel* find_flexsp_model(std::string_view name) {
  const std::string key = normalize_preset_name(name);
  for (const FlexSpModel& m : kModels) {
    if (normalize_preset_name(m.name) == key || normalize_preset_name(m.model_preset) == key) return &m;
  }
  return nullptr;
}

const AllToAllBandwidth& flexsp_all_to_all_bandwidth() {
  static const AllToAllBandwidth table = [] {
    std::vector<AllToAllPoint> points;
    const std::array<std::pair<std::uint32_t, double>, 6> measured = {
        {{2, 119.54}, {4, 104.07}, {8, 96.5}, {16, 10.33}, {32, 5.94}, {64, 4.87}}};
    for (const auto& [degree, gbps] : measured) {
      points.push_back(AllToAllPoint{degree, BytesPerSecond(gbps * kFlexSpBandwidthUnit_Bps), Seconds(0.0)});
    }
    return AllToAllBandwidth::from_table(std::move(points), kFlexSpGpusPerNode);
  }();
  return table;
}

FlexSpPresetCost::FlexSpPresetCost(const FlexSpModel& model, const CostModel& fallback,
                                   const AllToAllBandwidth& bandwidth)
    : model_(model), fallback_(fallback), network_(fallback.network(), bandwidth) {}

ComputeCost FlexSpPresetCost::compute_cost(const ComputeWork& work) const {
  if (work.shards == 0) throw InputError("flexsp cost: SP degree must be >= 1, got 0");
  double quadratic = 0.0, linear = 0.0;
  for (const Segment& segment : work.chunk.segments) {
    const double context = static_cast<double>(segment.context_tokens);
    const double end = context + static_cast<double>(segment.tokens);
    quadratic += end * end - context * context;
    linear += static_cast<double>(segment.tokens);
  }
  double seconds = 0.0;
  switch (work.part) {
    case LayerPart::Whole: seconds = model_.alpha1_s_per_token2 * quadratic + model_.alpha2_s_per_token * linear; break;
    case LayerPart::Attention: seconds = model_.alpha1_s_per_token2 * quadratic; break;
    case LayerPart::PreAttention:
    case LayerPart::PostAttention: seconds = 0.5 * model_.alpha2_s_per_token * linear; break;
  }
  const double pass_share = work.pass == Pass::Backward ? 2.0 / 3.0 : 1.0 / 3.0;
  const double layer_share = static_cast<double>(work.chunk.layer_count) / model_.layers;
  ComputeCost cost = fallback_.compute_cost(work);
  cost.time = Seconds(seconds * pass_share * layer_share / work.shards);
  return cost;
}

Seconds FlexSpPresetCost::Network::collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                                                   std::span<const std::uint32_t> ranks, Bytes size) const {
  if (kind != CommKind::AllToAll) return fallback_.collective_time(kind, algorithm, ranks, size);
  if (ranks.size() <= 1) return Seconds(0.0);
  const auto degree = static_cast<std::uint32_t>(ranks.size());
  return Seconds(static_cast<double>(size.count) / bandwidth_.bandwidth(degree).value);
}

Bytes flexsp_model_state_bytes(const FlexSpModel& model, FlexSpMaxLength max_length, std::uint32_t cluster_gpus) {
  return model_state_bytes(model.params(max_length), 3, cluster_gpus).total();
}

std::uint64_t flexsp_token_capacity(const FlexSpModel& model, FlexSpMaxLength max_length, std::uint32_t cluster_gpus,
                                    Bytes memory_cap) {
  const Bytes states = flexsp_model_state_bytes(model, max_length, cluster_gpus);
  if (states >= memory_cap) return 0;
  return static_cast<std::uint64_t>(std::floor(static_cast<double>((memory_cap - states).count) /
                                               model.gamma_bytes_per_token));
}

std::uint32_t flexsp_min_degree(std::uint64_t tokens, std::uint64_t capacity) {
  if (tokens == 0) return 1;
  if (capacity == 0) throw InputError("flexsp cost: token capacity is 0: the model states fill the memory");
  const std::uint64_t groups = (tokens + capacity - 1) / capacity;  // ceil(s / C)
  std::uint64_t d = 1;
  while (d < groups) d *= 2;
  if (d > (1ull << 31)) throw InputError(fmt::format("flexsp cost: {} tokens need an SP degree above 2^31", tokens));
  return static_cast<std::uint32_t>(d);
}

}  // namespace eppsim
