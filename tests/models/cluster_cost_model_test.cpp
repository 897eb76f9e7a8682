#include "models/cluster_cost_model.h"

#include <array>
#include <memory>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "models/network/closed_form_network.h"
#include "models/gpu_spec.h"
#include "models/transformer_spec.h"

namespace eppsim {
namespace {

const LinkParams kNvlink{BytesPerSecond(300e9), Seconds(2e-6)};
const LinkParams kNic{BytesPerSecond(25e9), Seconds(5e-6)};

struct Parts {
  std::shared_ptr<const ComputeCostModel> compute;
  std::shared_ptr<const ClosedFormNetwork> network;
  GpuSpec gpu;
};

Parts parts() {
  const GpuSpec& gpu = *find_gpu_preset("A100-80GB");
  return Parts{std::make_shared<AnalyticComputeCost>(*find_model_preset("llama2-7b"), gpu, AnalyticEfficiency{}),
               std::make_shared<ClosedFormNetwork>(kNvlink, kNic, std::vector<std::uint32_t>{0, 0, 1, 1}), gpu};
}

TEST(ClusterCostModel, ComputeIsTheComputeModelsShareOfThePart) {
  const Parts p = parts();
  const ClusterCostModel cost(p.compute, p.network, p.gpu.memory_bandwidth);
  const std::array<Segment, 1> one{Segment{8192, 0}};
  ComputeWork work;
  work.pass = Pass::Backward;
  work.chunk = ChunkWork{one, 4, true, false};
  const double whole = p.compute->cost(work).time.value;
  EXPECT_DOUBLE_EQ(cost.compute_time(work).value, whole);
  work.shards = 4;
  EXPECT_DOUBLE_EQ(cost.compute_time(work).value, whole / 4);  // the roofline scales perfectly
  double parts = 0.0;
  for (auto part : {LayerPart::PreAttention, LayerPart::Attention, LayerPart::PostAttention}) {
    work.part = part;
    EXPECT_EQ(cost.compute_time(work), p.compute->cost(work).time);
    parts += cost.compute_time(work).value;
  }
  EXPECT_NEAR(parts, whole / 4, 1e-12 * whole);
}

TEST(ClusterCostModel, OptimizerStreamsItsTrafficThroughHbm) {
  const Parts p = parts();
  const ClusterCostModel cost(p.compute, p.network, p.gpu.memory_bandwidth);
  EXPECT_DOUBLE_EQ(cost.optimizer_time(Bytes(28'000'000'000)).value, 28e9 / p.gpu.memory_bandwidth.value);
}

TEST(ClusterCostModel, CommunicationIsTheNetworks) {
  const Parts p = parts();
  const ClusterCostModel cost(p.compute, p.network, p.gpu.memory_bandwidth);
  const Bytes size(1 << 24);
  EXPECT_EQ(cost.p2p_time(1, 2, size), p.network->p2p_time(1, 2, size));
  const std::vector<std::uint32_t> all{0, 1, 2, 3};
  for (auto kind : {CommKind::AllReduce, CommKind::AllGather, CommKind::ReduceScatter,
                    CommKind::AllToAll, CommKind::Broadcast}) {
    EXPECT_EQ(cost.collective_time(kind, CollectiveAlgorithm::Auto, all, size),
              p.network->collective_time(kind, CollectiveAlgorithm::Auto, all, size));
  }
  EXPECT_THROW(ClusterCostModel(nullptr, p.network, p.gpu.memory_bandwidth), std::invalid_argument);
}

}  // namespace
}  // namespace eppsim
