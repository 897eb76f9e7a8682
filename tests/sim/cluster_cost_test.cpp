#include "sim/cluster_cost.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "models/topology/network_cost.h"
#include "models/topology/topology.h"
#include "tests/sim/test_scenarios.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

TEST(ClusterCost, GpusNodesAndTheNetworkOverTheAmortisationAtTheUtilisation) {
  // The quickstart: 16 A100-80GB ($10,000 each by default) on the simple cluster.
  const ResolvedScenario sc = testing::load_quickstart({"cluster.capital.node_usd=50000"});
  const auto cost = cluster_cost(sc, 1e5);
  ASSERT_TRUE(cost.has_value());
  const double network = network_cost_usd(build_topology(network_of(sc))->inventory(), sc.cluster.prices);
  EXPECT_GT(network, 0.0);
  EXPECT_DOUBLE_EQ(cost->network_usd(), network);
  EXPECT_DOUBLE_EQ(cost->gpus_usd(), 16 * 10000.0);
  EXPECT_DOUBLE_EQ(cost->nodes_usd(), 2 * 50000.0);
  EXPECT_DOUBLE_EQ(cost->capital_usd(), network + 160000.0 + 100000.0);
  EXPECT_DOUBLE_EQ(cost->amortisation_years(), 5.0);
  EXPECT_DOUBLE_EQ(cost->usd_per_hour(), cost->capital_usd() / (5 * 8766.0));
  EXPECT_DOUBLE_EQ(cost->usd_per_million_tokens(), cost->usd_per_hour() / (3600 * 1e5) * 1e6);
  // Half the utilisation, twice the price of a token; twice the throughput, half.
  const auto idle = cluster_cost(testing::load_quickstart({"cluster.capital.node_usd=50000",
                                                           "cluster.capital.utilisation=0.5"}), 1e5);
  EXPECT_DOUBLE_EQ(idle->usd_per_million_tokens(), 2 * cost->usd_per_million_tokens());
  EXPECT_DOUBLE_EQ(cluster_cost(sc, 2e5)->usd_per_million_tokens(), cost->usd_per_million_tokens() / 2);
}

TEST(ClusterCost, NoPriceNoCost) {
  EXPECT_FALSE(cluster_cost(testing::load_quickstart({"cluster.gpu.preset=B200"}), 1e5).has_value());
  EXPECT_TRUE(cluster_cost(testing::load_quickstart({"cluster.gpu.preset=B200", "cluster.capital.gpu_usd=40000"}), 1e5)
                  .has_value());
  EXPECT_FALSE(cluster_cost(testing::load_quickstart(), 0.0).has_value());
}

TEST(ClusterCost, PricesOutOfRangeAreInputErrors) {
  EXPECT_THROW(testing::load_quickstart({"cluster.capital.utilisation=1.5"}), InputError);
  EXPECT_THROW(testing::load_quickstart({"cluster.capital.amortisation_years=-1"}), InputError);
  EXPECT_THROW(testing::load_quickstart({"cluster.capital.gpu_usd=-5"}), InputError);
}

}  // namespace
}  // namespace eppsim
