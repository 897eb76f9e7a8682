#include "models/cluster_spec.h"

#include <gtest/gtest.h>

namespace eppsim {
namespace {

TEST(ClusterSpec, RanksAreNodeMajor) {
  ClusterSpec cluster;
  cluster.nodes = 4;
  cluster.gpus_per_node = 8;
  EXPECT_EQ(cluster.total_gpus(), 32u);
  EXPECT_EQ(cluster.node_of(0), 0u);
  EXPECT_EQ(cluster.local_gpu_of(0), 0u);
  EXPECT_EQ(cluster.node_of(7), 0u);
  EXPECT_EQ(cluster.local_gpu_of(7), 7u);
  EXPECT_EQ(cluster.node_of(8), 1u);
  EXPECT_EQ(cluster.local_gpu_of(8), 0u);
  EXPECT_EQ(cluster.node_of(31), 3u);
  EXPECT_EQ(cluster.local_gpu_of(31), 7u);
}

}  // namespace
}  // namespace eppsim
