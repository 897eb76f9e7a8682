#include "models/flexsp_preset.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/errors.h"
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

TEST(FlexSpPreset, WorkedTimeNumbers) {
  const FlexSpModel& m = gpt7b();
  // 64K sequence: 4,260 + 170 ms at d = 8, 2,130 + 793 ms at d = 16.
  EXPECT_NEAR(ms(flexsp_compute_time(m, 65536, 8)), 4260.0, 0.5);
  EXPECT_NEAR(ms(flexsp_all_to_all_time(m, 65536, 8)), 170.0, 0.5);
  EXPECT_NEAR(ms(flexsp_compute_time(m, 65536, 16)), 2130.0, 0.5);
  EXPECT_NEAR(ms(flexsp_all_to_all_time(m, 65536, 16)), 793.0, 0.5);
  // 4K sequence at d = 64: 13 + 26 ms.
  EXPECT_NEAR(ms(flexsp_compute_time(m, 4096, 64)), 13.0, 0.5);
  EXPECT_NEAR(ms(flexsp_all_to_all_time(m, 4096, 64)), 26.0, 0.5);
  // No all-to-all at d = 1; unmeasured degrees throw.
  EXPECT_EQ(flexsp_all_to_all_time(m, 65536, 1), Seconds(0.0));
  EXPECT_THROW(flexsp_all_to_all_time(m, 65536, 12), InputError);
  EXPECT_THROW(flexsp_compute_time(m, 65536, 0), InputError);
}

TEST(FlexSpPreset, GroupTimeSumsSequencesPlusBetaOnce) {
  const FlexSpModel& m = gpt7b();
  const std::vector<std::uint64_t> seqs = {65536, 4096, 4096};
  double expected = 629.4;
  for (std::uint64_t s : seqs) expected += ms(flexsp_compute_time(m, s, 8)) + ms(flexsp_all_to_all_time(m, s, 8));
  EXPECT_NEAR(ms(flexsp_group_time(m, seqs, 8)), expected, 1e-9);
  EXPECT_NEAR(ms(flexsp_group_time(m, std::vector<std::uint64_t>{65536}, 16)), 2130.2 + 793.0 + 629.4, 0.5);
  EXPECT_EQ(flexsp_group_time(m, std::vector<std::uint64_t>{}, 8), Seconds(0.0));
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
