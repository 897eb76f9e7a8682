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

void check_degree(std::uint32_t degree) {
  if (degree == 0) throw InputError("flexsp cost: SP degree must be >= 1, got 0");
}

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

Seconds flexsp_compute_time(const FlexSpModel& model, std::uint64_t tokens, std::uint32_t degree) {
  check_degree(degree);
  const double s = static_cast<double>(tokens);
  return Seconds((model.alpha1_s_per_token2 * s * s + model.alpha2_s_per_token * s) / degree);
}

Seconds flexsp_all_to_all_time(const FlexSpModel& model, std::uint64_t tokens, std::uint32_t degree,
                               const AllToAllBandwidth& bandwidth) {
  check_degree(degree);
  if (degree == 1 || tokens == 0) return Seconds(0.0);
  // 4 all-to-alls per layer x (forward + backward) x 2 bytes (bf16), per GPU: / d.
  const double bytes = 4.0 * 2.0 * model.layers * model.hidden_size * static_cast<double>(tokens) * 2.0 / degree;
  return Seconds(bytes / bandwidth.bandwidth(degree).value);
}

Seconds flexsp_group_time(const FlexSpModel& model, std::span<const std::uint64_t> sequences, std::uint32_t degree,
                          const AllToAllBandwidth& bandwidth) {
  check_degree(degree);
  if (sequences.empty()) return Seconds(0.0);
  Seconds total = model.beta1;
  for (const std::uint64_t s : sequences) {
    total += flexsp_compute_time(model, s, degree) + flexsp_all_to_all_time(model, s, degree, bandwidth);
  }
  return total;
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
