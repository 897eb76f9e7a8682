#include "models/network/all_to_all_efficiency_network.h"

#include <array>
#include <memory>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "models/network/closed_form_network.h"

namespace eppsim {
namespace {

const LinkParams kNvlink{BytesPerSecond(300e9), Seconds(2e-6)};
const LinkParams kNic{BytesPerSecond(25e9), Seconds(5e-6)};

std::shared_ptr<const ClosedFormNetwork> two_nodes_of_four() {
  return std::make_shared<ClosedFormNetwork>(kNvlink, kNic, std::vector<std::uint32_t>{0, 0, 0, 0, 1, 1, 1, 1});
}

TEST(AllToAllEfficiencyNetwork, DividesAllToAllsOfAListedDegree) {
  const auto base = two_nodes_of_four();
  const AllToAllEfficiencyNetwork derated(base, {{4, 0.25}, {8, 0.8}});
  const std::array<std::uint32_t, 4> node{0, 1, 2, 3};
  const std::array<std::uint32_t, 8> all{0, 1, 2, 3, 4, 5, 6, 7};
  const std::array<std::uint32_t, 2> pair{0, 1};
  const Bytes size(64 << 20);
  for (auto algorithm : {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Direct}) {
    EXPECT_DOUBLE_EQ(derated.collective_time(CommKind::AllToAll, algorithm, node, size).value,
                     base->collective_time(CommKind::AllToAll, algorithm, node, size).value / 0.25);
    EXPECT_DOUBLE_EQ(derated.collective_time(CommKind::AllToAll, algorithm, all, size).value,
                     base->collective_time(CommKind::AllToAll, algorithm, all, size).value / 0.8);
  }
  // Degree 2 is not listed: efficiency 1.
  EXPECT_DOUBLE_EQ(derated.efficiency(2), 1.0);
  EXPECT_DOUBLE_EQ(derated.collective_time(CommKind::AllToAll, CollectiveAlgorithm::Auto, pair, size).value,
                   base->collective_time(CommKind::AllToAll, CollectiveAlgorithm::Auto, pair, size).value);
}

TEST(AllToAllEfficiencyNetwork, LeavesOtherCommunicationAlone) {
  const auto base = two_nodes_of_four();
  const AllToAllEfficiencyNetwork derated(base, {{4, 0.25}, {8, 0.5}});
  const std::array<std::uint32_t, 4> node{0, 1, 2, 3};
  const Bytes size(64 << 20);
  for (auto kind : {CommKind::AllReduce, CommKind::AllGather, CommKind::ReduceScatter,
                    CommKind::Broadcast}) {
    EXPECT_DOUBLE_EQ(derated.collective_time(kind, CollectiveAlgorithm::Auto, node, size).value,
                     base->collective_time(kind, CollectiveAlgorithm::Auto, node, size).value);
  }
  EXPECT_DOUBLE_EQ(derated.p2p_time(0, 5, size).value, base->p2p_time(0, 5, size).value);
}

TEST(AllToAllEfficiencyNetwork, RejectsWhatTheScenarioRefuses) {
  const auto base = two_nodes_of_four();
  EXPECT_THROW(AllToAllEfficiencyNetwork(nullptr, {}), std::invalid_argument);
  EXPECT_THROW(AllToAllEfficiencyNetwork(base, {{1, 0.5}}), std::invalid_argument);
  EXPECT_THROW(AllToAllEfficiencyNetwork(base, {{4, 0.0}}), std::invalid_argument);
  EXPECT_THROW(AllToAllEfficiencyNetwork(base, {{4, 1.5}}), std::invalid_argument);
  EXPECT_THROW(AllToAllEfficiencyNetwork(base, {{4, 0.5}, {4, 0.6}}), std::invalid_argument);
}

}  // namespace
}  // namespace eppsim
