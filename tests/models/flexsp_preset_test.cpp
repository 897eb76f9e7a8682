#include "models/flexsp_preset.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/errors.h"
#include "models/network/closed_form_network.h"
#include "models/transformer_spec.h"

namespace eppsim {
namespace {

const FlexSpModel& gpt7b() { return *find_flexsp_model("gpt-7b"); }
double ms(Seconds s) { return s.value * 1e3; }

TEST(FlexSpPreset, ModelsAndLookup) {
  ASSERT_EQ(flexsp_models().size(), 3u);
  EXPECT_EQ(find_flexsp_model("GPT_7B"), &gpt7b());
  EXPECT_EQ(find_flexsp_model("gpt-6.7b"), &gpt7b());
  EXPECT_EQ(find_flexsp_model("gpt-13b")->layers, 40u);
  EXPECT_EQ(find_flexsp_model("gpt-99b"), nullptr);
  for (const FlexSpModel& f : flexsp_models()) {
    const TransformerSpec* shape = find_model_preset(f.model_preset);
    ASSERT_NE(shape, nullptr) << f.name;
    EXPECT_EQ(shape->layers, f.layers);
    EXPECT_EQ(shape->hidden_size, f.hidden_size);
  }
  const FlexSpModel& f = *find_flexsp_model("gpt-30b");
  EXPECT_DOUBLE_EQ(f.alpha1_s_per_token2, 15.43e-9);
  EXPECT_DOUBLE_EQ(f.alpha2_s_per_token, 0.8036e-3);
  EXPECT_DOUBLE_EQ(f.beta1.value, 2.7894);
  EXPECT_DOUBLE_EQ(f.gamma_bytes_per_token, 3.417 * 1048576.0);
  EXPECT_DOUBLE_EQ(f.params(FlexSpMaxLength::K384), 32.72 * 1073741824.0);
}

TEST(FlexSpPreset, BandwidthTable) {
  const AllToAllBandwidth& bw = flexsp_all_to_all_bandwidth();
  EXPECT_DOUBLE_EQ(bw.bandwidth(2).value, 119.54 * 1048576.0 * 1000.0);
  EXPECT_DOUBLE_EQ(bw.bandwidth(64).value, 4.87 * 1048576.0 * 1000.0);
  EXPECT_EQ(bw.latency(16), Seconds(0.0));
  EXPECT_THROW(bw.bandwidth(12), InputError);
  EXPECT_THROW(bw.bandwidth(128), InputError);
  EXPECT_FALSE(bw.crosses_nodes(8));
  EXPECT_TRUE(bw.crosses_nodes(16));
  EXPECT_EQ(kFlexSpMemoryCap, Bytes(28ull * 1024 * 1024 * 1024));
}

// flexsp.md's worked numbers: 7B, N = 64, 28 GB.
TEST(FlexSpPreset, WorkedMemoryNumbers) {
  const Bytes ms_bytes = flexsp_model_state_bytes(gpt7b(), FlexSpMaxLength::K192, 64);
  EXPECT_NEAR(static_cast<double>(ms_bytes.count) / (1ull << 30), 1.8, 0.05);  // "MS ~ 1.8 GB"
  const std::uint64_t c = flexsp_token_capacity(gpt7b(), FlexSpMaxLength::K192, 64);
  EXPECT_NEAR(static_cast<double>(c), 5992.0, 2.0);                              // "C ~ 5,992"
  EXPECT_NEAR(static_cast<double>(c * 64), 383e3, 1e3);                          // "~383K per micro-batch"
  EXPECT_EQ(flexsp_token_capacity(gpt7b(), FlexSpMaxLength::K192, 64, Bytes(1ull << 30)), 0u);
}

// What FlexSpPresetCost falls back to: FLOPs it reports, and one node's
// closed-form network for what is not an all-to-all.
class Fallback final : public CostModel {
 public:
  ComputeCost compute_cost(const ComputeWork&) const override { return ComputeCost{{1.0, 2.0}, Bytes(3), Seconds(9.0)}; }
  Seconds optimizer_time(Bytes) const override { return Seconds(7.0); }
  const NetworkTimeModel& network() const override { return network_; }

 private:
  ClosedFormNetwork network_{LinkParams{BytesPerSecond(1e9), Seconds(1e-6)}, LinkParams{BytesPerSecond(1e9), Seconds(1e-6)},
                             std::vector<std::uint32_t>(64, 0)};
};

std::vector<std::uint32_t> group(std::uint32_t d) {
  std::vector<std::uint32_t> ranks(d);
  for (std::uint32_t r = 0; r < d; ++r) ranks[r] = r;
  return ranks;
}

// T_cmp of one whole-model forward plus backward of `tokens` at degree d.
double compute_ms(const CostModel& cost, std::uint64_t tokens, std::uint32_t d) {
  const Segment segment{tokens, 0};
  const ChunkWork chunk{std::span(&segment, 1), 32, true, true};
  return ms(cost.compute_time(ComputeWork{Pass::Forward, chunk, LayerPart::Whole, d})) +
         ms(cost.compute_time(ComputeWork{Pass::Backward, chunk, LayerPart::Whole, d}));
}

// T_a2a: FlexSP's per-GPU volume 4 x 2 x L x h x s x 2 bytes / d, at BW(d).
double all_to_all_ms(const CostModel& cost, std::uint64_t tokens, std::uint32_t d) {
  const auto bytes = static_cast<std::uint64_t>(4.0 * 2.0 * 32 * 4096 * static_cast<double>(tokens) * 2.0 / d);
  return ms(cost.collective_time(CommKind::AllToAll, CollectiveAlgorithm::Auto, group(d), Bytes(bytes)));
}

TEST(FlexSpPresetCost, WorkedTimeNumbers) {
  const Fallback fallback;
  const FlexSpPresetCost cost(gpt7b(), fallback);
  // 64K sequence: 4,260 + 170 ms at d = 8, 2,130 + 793 ms at d = 16.
  EXPECT_NEAR(compute_ms(cost, 65536, 8), 4260.0, 0.5);
  EXPECT_NEAR(all_to_all_ms(cost, 65536, 8), 170.0, 0.5);
  EXPECT_NEAR(compute_ms(cost, 65536, 16), 2130.0, 0.5);
  EXPECT_NEAR(all_to_all_ms(cost, 65536, 16), 793.0, 0.5);
  // 4K sequence at d = 64: 13 + 26 ms.
  EXPECT_NEAR(compute_ms(cost, 4096, 64), 13.0, 0.5);
  EXPECT_NEAR(all_to_all_ms(cost, 4096, 64), 26.0, 0.5);
  // Unmeasured degrees throw; no all-to-all over one rank.
  EXPECT_THROW(all_to_all_ms(cost, 65536, 12), InputError);
  EXPECT_EQ(all_to_all_ms(cost, 65536, 1), 0.0);
  EXPECT_THROW(compute_ms(cost, 65536, 0), InputError);
}

TEST(FlexSpPresetCost, SplitsPassesPartsAndLayersAndFallsBackForTheRest) {
  const Fallback fallback;
  const FlexSpPresetCost cost(gpt7b(), fallback);
  const FlexSpModel& m = gpt7b();
  const Segment segment{4096, 0};
  const ChunkWork all{std::span(&segment, 1), 32, true, true};
  const ChunkWork quarter{std::span(&segment, 1), 8, false, false};
  const double whole = m.alpha1_s_per_token2 * 4096.0 * 4096.0 + m.alpha2_s_per_token * 4096.0;
  EXPECT_NEAR(cost.compute_time(ComputeWork{Pass::Forward, all, LayerPart::Whole, 1}).value, whole / 3, 1e-12);
  EXPECT_NEAR(cost.compute_time(ComputeWork{Pass::Backward, all, LayerPart::Whole, 1}).value, 2 * whole / 3, 1e-12);
  EXPECT_NEAR(cost.compute_time(ComputeWork{Pass::Recompute, quarter, LayerPart::Whole, 2}).value, whole / 3 / 4 / 2,
              1e-12);
  const double parts = cost.compute_time(ComputeWork{Pass::Forward, all, LayerPart::PreAttention, 1}).value +
                       cost.compute_time(ComputeWork{Pass::Forward, all, LayerPart::Attention, 1}).value +
                       cost.compute_time(ComputeWork{Pass::Forward, all, LayerPart::PostAttention, 1}).value;
  EXPECT_NEAR(parts, whole / 3, 1e-12);
  // A slice after 4K of context attends to all 8K.
  const Segment slice{4096, 4096};
  const ChunkWork later{std::span(&slice, 1), 32, false, false};
  EXPECT_NEAR(cost.compute_time(ComputeWork{Pass::Forward, later, LayerPart::Attention, 1}).value,
              m.alpha1_s_per_token2 * (8192.0 * 8192.0 - 4096.0 * 4096.0) / 3, 1e-12);
  // FLOPs and traffic, optimizer steps and other communication: the fallback's.
  EXPECT_EQ(cost.compute_cost(ComputeWork{Pass::Forward, all, LayerPart::Whole, 1}).memory_traffic, Bytes(3));
  EXPECT_EQ(cost.optimizer_time(Bytes(1)).value, 7.0);
  EXPECT_EQ(cost.collective_time(CommKind::AllGather, CollectiveAlgorithm::Auto, group(4), Bytes(1000)).value,
            fallback.collective_time(CommKind::AllGather, CollectiveAlgorithm::Auto, group(4), Bytes(1000)).value);
  EXPECT_EQ(cost.p2p_time(0, 1, Bytes(1000)).value, fallback.p2p_time(0, 1, Bytes(1000)).value);
}

TEST(FlexSpPreset, MinimumDegree) {
  EXPECT_EQ(flexsp_min_degree(5993, 5993), 1u);
  EXPECT_EQ(flexsp_min_degree(5994, 5993), 2u);
  EXPECT_EQ(flexsp_min_degree(65536, 5993), 16u);  // ceil(10.9) = 11 -> 16
  EXPECT_EQ(flexsp_min_degree(0, 0), 1u);
  EXPECT_THROW(flexsp_min_degree(1, 0), InputError);
}

}  // namespace
}  // namespace eppsim
