#include "models/network/calibrated_network.h"

#include <array>
#include <memory>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "models/network/all_to_all_efficiency_network.h"
#include "models/network/closed_form_network.h"
#include "models/cluster_cost_model.h"
#include "models/gpu_spec.h"
#include "models/transformer_spec.h"

namespace eppsim {
namespace {

const LinkParams kNvlink{BytesPerSecond(300e9), Seconds(2e-6)};
const LinkParams kNic{BytesPerSecond(25e9), Seconds(5e-6)};
// Ranks 0, 1 on node 0; 2, 3 on node 1.
const std::vector<std::uint32_t> kNodes{0, 0, 1, 1};

std::shared_ptr<const ClosedFormNetwork> closed_form() {
  return std::make_shared<ClosedFormNetwork>(kNvlink, kNic, kNodes);
}

CommFit fit(CommKind kind, std::uint32_t n, bool crosses, double latency_s, double bandwidth_Bps) {
  return CommFit{kind, n, crosses, Seconds(latency_s), BytesPerSecond(bandwidth_Bps)};
}

TEST(CalibratedNetwork, AFitIsLatencyPlusBusBytesOverBusBandwidth) {
  EXPECT_DOUBLE_EQ(fitted_time(fit(CommKind::AllReduce, 4, false, 1e-5, 1.5e9), Bytes(1000)).value, 1e-5 + 1e-6);
}

TEST(CalibratedNetwork, AMatchingFitPricesTheCollective) {
  const auto fallback = closed_form();
  const CalibratedNetwork net({fit(CommKind::AllReduce, 2, false, 1e-5, 1e9), fit(CommKind::AllReduce, 4, true, 3e-5, 5e8)},
                              fallback, kNodes);
  const std::array<std::uint32_t, 2> intra{0, 1};
  const std::array<std::uint32_t, 4> all{0, 1, 2, 3};
  const Bytes size(1 << 20);
  EXPECT_DOUBLE_EQ(net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, intra, size).value,
                   1e-5 + (1 << 20) / 1e9);
  // The hint does not matter: the fit measured what the library chose.
  EXPECT_DOUBLE_EQ(net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Tree, all, size).value,
                   3e-5 + 1.5 * (1 << 20) / 5e8);
  EXPECT_TRUE(net.fitted_collective(CommKind::AllReduce, intra));
  EXPECT_FALSE(net.fitted_collective(CommKind::AllGather, intra));
  ASSERT_NE(net.find(CommKind::AllReduce, 4, true), nullptr);
  EXPECT_EQ(net.find(CommKind::AllReduce, 4, false), nullptr);
}

TEST(CalibratedNetwork, FallsBackWhereNoFitMatches) {
  const auto fallback = closed_form();
  const CalibratedNetwork net({fit(CommKind::AllReduce, 2, false, 1e-5, 1e9)}, fallback, kNodes);
  const std::array<std::uint32_t, 2> across{1, 2};  // same size, but crosses nodes
  const std::array<std::uint32_t, 4> four{0, 1, 2, 3};
  const std::array<std::uint32_t, 2> intra{0, 1};
  const Bytes size(1 << 20);
  for (auto algorithm : {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring}) {
    EXPECT_EQ(net.collective_time(CommKind::AllReduce, algorithm, across, size),
              fallback->collective_time(CommKind::AllReduce, algorithm, across, size));
    EXPECT_EQ(net.collective_time(CommKind::AllReduce, algorithm, four, size),
              fallback->collective_time(CommKind::AllReduce, algorithm, four, size));
    // Another kind over the fitted group.
    EXPECT_EQ(net.collective_time(CommKind::AllGather, algorithm, intra, size),
              fallback->collective_time(CommKind::AllGather, algorithm, intra, size));
  }
  EXPECT_EQ(net.p2p_time(0, 1, size), fallback->p2p_time(0, 1, size));
  const std::array<std::uint32_t, 1> alone{3};
  EXPECT_EQ(net.collective_time(CommKind::AllReduce, CollectiveAlgorithm::Auto, alone, size).value, 0.0);
}

TEST(CalibratedNetwork, PointToPointUsesTheSendRecvFitOfItsNodeCrossing) {
  const auto fallback = closed_form();
  const CalibratedNetwork net({fit(CommKind::SendRecv, 2, true, 4e-6, 1e10)}, fallback, kNodes);
  EXPECT_DOUBLE_EQ(net.p2p_time(1, 2, Bytes(1000)).value, 4e-6 + 1000 / 1e10);
  EXPECT_EQ(net.p2p_time(0, 1, Bytes(1000)), fallback->p2p_time(0, 1, Bytes(1000)));  // inside a node: no fit
  EXPECT_EQ(net.p2p_time(2, 2, Bytes(1000)).value, 0.0);
  EXPECT_TRUE(net.fitted_p2p(1, 2));
  EXPECT_FALSE(net.fitted_p2p(0, 1));
  EXPECT_FALSE(net.fitted_p2p(2, 2));
}

TEST(CalibratedNetwork, RejectsBrokenFits) {
  const auto fallback = closed_form();
  EXPECT_THROW(CalibratedNetwork({fit(CommKind::AllReduce, 2, false, 1e-5, 1e9), fit(CommKind::AllReduce, 2, false, 2e-5, 1e9)},
                                 fallback, kNodes),
               std::invalid_argument);
  EXPECT_THROW(CalibratedNetwork({fit(CommKind::AllReduce, 1, false, 1e-5, 1e9)}, fallback, kNodes), std::invalid_argument);
  EXPECT_THROW(CalibratedNetwork({fit(CommKind::AllReduce, 2, false, -1.0, 1e9)}, fallback, kNodes), std::invalid_argument);
  EXPECT_THROW(CalibratedNetwork({fit(CommKind::AllReduce, 2, false, 1e-5, 0.0)}, fallback, kNodes), std::invalid_argument);
  EXPECT_THROW(CalibratedNetwork({}, nullptr, kNodes), std::invalid_argument);
  // The same kind and size inside and across nodes are two fits.
  EXPECT_NO_THROW(CalibratedNetwork({fit(CommKind::AllReduce, 2, false, 1e-5, 1e9), fit(CommKind::AllReduce, 2, true, 1e-5, 1e9)},
                                    fallback, kNodes));
}

// A cost model answers for its network's fits, through any wrapping.
TEST(CalibratedNetwork, ItsFitsShowThroughTheCostModel) {
  const auto compute =
      std::make_shared<AnalyticComputeCost>(*find_model_preset("llama2-7b"), *find_gpu_preset("A100-80GB"), AnalyticEfficiency{});
  const auto calibrated = std::make_shared<CalibratedNetwork>(
      std::vector<CommFit>{fit(CommKind::AllReduce, 2, false, 1e-5, 1e9)}, closed_form(), kNodes);
  const ClusterCostModel with(compute, calibrated, BytesPerSecond(2e12));
  const std::vector<std::uint32_t> pair{0, 1};
  EXPECT_TRUE(with.fitted_collective(CommKind::AllReduce, pair));
  EXPECT_FALSE(with.fitted_collective(CommKind::AllGather, pair));
  const ClusterCostModel derated(
      compute, std::make_shared<AllToAllEfficiencyNetwork>(calibrated, std::vector<AllToAllEfficiencyPoint>{{2, 0.5}}),
      BytesPerSecond(2e12));
  EXPECT_TRUE(derated.fitted_collective(CommKind::AllReduce, pair));
  const ClusterCostModel without(compute, closed_form(), BytesPerSecond(2e12));
  EXPECT_FALSE(without.fitted_collective(CommKind::AllReduce, pair));
  EXPECT_FALSE(without.fitted_p2p(0, 1));
}

}  // namespace
}  // namespace eppsim
