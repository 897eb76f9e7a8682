#include "traces/chakra/chakra_import.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/traces/chakra_fixture.h"
#include "schedule/program_ops.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace eppsim::testing;

std::vector<std::uint32_t> deps_of(OpView op) { return {op.deps().begin(), op.deps().end()}; }

std::string import_error(const std::vector<ChakraRankTrace>& ranks, const ChakraImportOptions& options = {}) {
  try {
    import_chakra(ranks, "t", options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ChakraImport, ComputeSendRecvBecomeOpsOnTheirStreams) {
  const auto s = import_chakra({chakra_rank({comp_node(10, 5), send_node(11, 1, 4096, 3, {10})}),
                                chakra_rank({recv_node(20, 0, 4096, 3), comp_node(21, 2, {20})})},
                               "t");
  ASSERT_EQ(s.num_ranks(), 2u);
  EXPECT_THAT(std::vector<std::string>(s.stream_names().begin(), s.stream_names().end()),
              ElementsAre("compute", "send", "recv", "collective", "memory"));
  EXPECT_EQ(s.strategy(), "chakra");
  const auto r0 = ops_of(s, 0);
  ASSERT_EQ(r0.size(), 2u);
  ASSERT_TRUE(r0[0].is_compute());
  EXPECT_EQ(compute_of(s, r0[0]).phase(), proto::FORWARD);
  EXPECT_EQ(r0[0].duration_source(), proto::DURATION_FIXED);
  EXPECT_EQ(r0[0].fixed_duration_ns(), 5000);
  EXPECT_EQ(r0[0].stream(), 0u);
  ASSERT_TRUE(r0[1].is_send());
  EXPECT_EQ(r0[1].peer(), 1u);
  EXPECT_EQ(r0[1].size_bytes(), 4096u);
  EXPECT_EQ(r0[1].tag(), 3u);
  EXPECT_EQ(r0[1].stream(), 1u);
  EXPECT_EQ(r0[1].duration_source(), proto::DURATION_FROM_WORK);
  EXPECT_THAT(deps_of(r0[1]), ElementsAre(0u));
  const auto r1 = ops_of(s, 1);
  ASSERT_TRUE(r1[0].is_recv());
  EXPECT_EQ(r1[0].peer(), 0u);
  EXPECT_EQ(r1[0].stream(), 2u);
  EXPECT_THAT(deps_of(r1[1]), ElementsAre(0u));
}

TEST(ChakraImport, NodesAreOrderedTopologicallyTiesInFileOrder) {
  // Node 1 depends on node 3, which comes later in the file.
  const auto s = import_chakra({chakra_rank({comp_node(0, 1), comp_node(1, 1, {3}), comp_node(2, 1), comp_node(3, 1, {}),
                                             })},
                               "t");
  const auto ops = ops_of(s, 0);
  ASSERT_EQ(ops.size(), 4u);
  // Order: 0, 2, 3, 1 (node 1 waits for node 3).
  EXPECT_TRUE(ops[0].deps().empty());
  EXPECT_THAT(deps_of(ops[3]), ElementsAre(2u));
}

TEST(ChakraImport, ControlAndDataDependenciesBothCount) {
  const auto s = import_chakra({chakra_rank({comp_node(0, 1), comp_node(1, 1), chakra_node(2, chakra::COMP_NODE, {0}, {1})})}, "t");
  EXPECT_THAT(deps_of(ops_of(s, 0)[2]), ElementsAre(1u, 0u));
}

TEST(ChakraImport, MetadataNodesStandForTheirDependencies) {
  const auto s = import_chakra(
      {chakra_rank({comp_node(0, 1), chakra_node(1, chakra::METADATA_NODE, {0}), comp_node(2, 1, {1})})}, "t");
  ASSERT_EQ(ops_of(s, 0).size(), 2u);
  EXPECT_THAT(deps_of(ops_of(s, 0)[1]), ElementsAre(0u));
}

// Layers of K compute nodes joined through K metadata nodes that each wait on
// the whole layer before: every op of a layer depends on each op of the layer
// before once, in the order first met. (The union used to search its list so
// far for each op: K^3 per layer, minutes at this size.)
TEST(ChakraImport, WideFanOutsThroughMetadataNodesGiveEachDependencyOnce) {
  constexpr std::uint64_t kWidth = 600, kLayers = 3;
  ChakraRankTrace rank = chakra_rank({});
  std::uint64_t id = 0;
  std::vector<std::uint64_t> previous;
  for (std::uint64_t layer = 0; layer < kLayers; ++layer) {
    std::vector<std::uint64_t> joins;
    for (std::uint64_t k = 0; k < kWidth && layer > 0; ++k) {
      chakra::Node join = chakra_node(id, chakra::METADATA_NODE);
      for (auto p = previous.rbegin(); p != previous.rend(); ++p) join.add_data_deps(*p);
      rank.nodes.push_back(join);
      joins.push_back(id++);
    }
    previous.clear();
    for (std::uint64_t k = 0; k < kWidth; ++k) {
      chakra::Node op = comp_node(id, 1);
      for (auto j : joins) op.add_data_deps(j);
      rank.nodes.push_back(op);
      previous.push_back(id++);
    }
  }
  const auto s = import_chakra({rank}, "t");
  const auto ops = ops_of(s, 0);
  ASSERT_EQ(ops.size(), kWidth * kLayers);
  std::vector<std::uint32_t> layer_before(kWidth);
  for (std::uint32_t k = 0; k < kWidth; ++k) layer_before[k] = static_cast<std::uint32_t>(kWidth * (kLayers - 1) - 1 - k);
  EXPECT_EQ(deps_of(ops[kWidth * (kLayers - 1)]), layer_before);
  EXPECT_EQ(deps_of(ops[kWidth * kLayers - 1]), layer_before);
  EXPECT_TRUE(deps_of(ops[0]).empty());
}

TEST(ChakraImport, MemoryNodesTakeTheirRecordedTimeOnTheMemoryStream) {
  auto load = chakra_node(0, chakra::MEM_LOAD_NODE);
  load.set_duration_micros(7);
  add_int64_attribute(load.mutable_attr(), chakra_names::kTensorSize, 1 << 20);
  const auto s = import_chakra({chakra_rank({load})}, "t");
  const OpView op = ops_of(s, 0)[0];
  EXPECT_EQ(op.stream(), 4u);
  EXPECT_EQ(op.fixed_duration_ns(), 7000);
  ASSERT_TRUE(op.is_compute());
  EXPECT_EQ(compute_of(s, op).memory_traffic_bytes(), 1u << 20);
}

TEST(ChakraImport, ComputeWithoutDurationIsPricedByTheRoofline) {
  auto comp = chakra_node(0, chakra::COMP_NODE);
  add_int64_attribute(comp.mutable_attr(), chakra_names::kNumOps, 2'000'000'000);   // 2 GFLOP
  add_int64_attribute(comp.mutable_attr(), chakra_names::kTensorSize, 1'000'000);  // 1 MB
  ChakraImportOptions options;
  options.peak_flops_per_s = 1e12;      // 2 ms of compute
  options.memory_bytes_per_s = 1e9;     // 1 ms of memory
  const auto s = import_chakra({chakra_rank({comp})}, "t", options);
  const OpView op = ops_of(s, 0)[0];
  EXPECT_EQ(op.fixed_duration_ns(), 2'000'000);
  ASSERT_TRUE(op.is_compute());
  EXPECT_DOUBLE_EQ(compute_of(s, op).flops(), 2e9);
}

TEST(ChakraImport, CollectivesUseTheCommunicatorGroups) {
  ChakraImportOptions options;
  options.comm_groups = {{1, {0, 1}}, {2, {2, 3}}};
  std::vector<ChakraRankTrace> ranks;
  for (std::uint32_t r = 0; r < 4; ++r) {
    ranks.push_back(chakra_rank({coll_node(0, chakra::ALL_GATHER, 1024, r < 2 ? "1" : "2"),
                                 coll_node(1, chakra::ALL_REDUCE, 2048, "", {0})}));
  }
  const auto s = import_chakra(ranks, "t", options);
  ASSERT_EQ(s.groups_size(), 3);  // the file's two, then every rank
  EXPECT_THAT(std::vector<std::uint32_t>(s.groups(1).ranks().begin(), s.groups(1).ranks().end()), ElementsAre(2u, 3u));
  EXPECT_EQ(s.groups(2).ranks_size(), 4);
  const auto r3 = ops_of(s, 3);
  ASSERT_TRUE(r3[0].is_collective());
  EXPECT_EQ(r3[0].group(), 1u);
  EXPECT_EQ(r3[0].collective_kind(), proto::ALL_GATHER);
  ASSERT_TRUE(r3[1].is_collective());
  EXPECT_EQ(r3[1].group(), 2u);
  EXPECT_EQ(r3[1].size_bytes(), 2048u);
}

TEST(ChakraImport, ErrorsNameTheFileTheNodeAndTheRule) {
  EXPECT_THAT(import_error({chakra_rank({comp_node(0, 1, {9})})}), HasSubstr("t.0.et: node 0: data_deps names node 9, which is not in the file"));
  EXPECT_THAT(import_error({chakra_rank({comp_node(0, 1, {1}), comp_node(1, 1, {0})})}), HasSubstr("t.0.et: node 0: its dependencies form a cycle"));
  EXPECT_THAT(import_error({chakra_rank({comp_node(0, 1), comp_node(0, 1)})}), HasSubstr("node 0: id used twice"));
  EXPECT_THAT(import_error({chakra_rank({coll_node(0, chakra::ALL_REDUCE, 8, "5")})}),
              HasSubstr("t.0.et: node 0: pg_name \"5\": no such group in the communicator-group file"));
  EXPECT_THAT(import_error({chakra_rank({coll_node(0, chakra::BARRIER, 8)})}), HasSubstr("comm_type 9 (BARRIER) is not supported"));
  EXPECT_THAT(import_error({chakra_rank({send_node(0, 3, 8, 0)})}), HasSubstr("comm_dst: must be a rank in [0, 1), got 3"));
  EXPECT_THAT(import_error({chakra_rank({chakra_node(0, chakra::COMM_SEND_NODE)})}), HasSubstr("attribute comm_dst is missing"));
  auto bad_type = chakra_node(0, chakra::COMM_SEND_NODE);
  add_string_attribute(bad_type.mutable_attr(), chakra_names::kCommDst, "one");
  EXPECT_THAT(import_error({chakra_rank({bad_type})}), HasSubstr("attribute comm_dst: expected an integer"));
  ChakraImportOptions options;
  options.comm_groups = {{1, {1}}};
  EXPECT_THAT(import_error({chakra_rank({coll_node(0, chakra::ALL_REDUCE, 8, "1")}), chakra_rank({})}, options),
              HasSubstr("rank 0 is not a member of the group"));
}

TEST(ChakraImport, AstraSimExampleTracesBecomeValidSchedules) {
  const auto dir = shared_chakra_dir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " is absent (../shared/data beside the checkout)";
  const auto all_reduce = import_chakra_prefix(dir / "all_reduce_8npus_1MB" / "all_reduce");
  ASSERT_EQ(all_reduce.num_ranks(), 8u);
  ASSERT_EQ(all_reduce.groups_size(), 1);
  EXPECT_EQ(all_reduce.groups(0).ranks_size(), 8);
  for (const auto& program : all_reduce.programs()) {
    const auto ops = ops_of(program);
    ASSERT_EQ(ops.size(), 1u);
    ASSERT_TRUE(ops[0].is_collective());
    EXPECT_EQ(ops[0].collective_kind(), proto::ALL_REDUCE);
    EXPECT_EQ(ops[0].size_bytes(), 1u << 20);
  }
  const auto all_gather = import_chakra_prefix(dir / "all_gather_16npus_1MB" / "all_gather");
  EXPECT_EQ(all_gather.num_ranks(), 16u);
  ASSERT_TRUE(ops_of(all_gather, 15)[0].is_collective());
  EXPECT_EQ(ops_of(all_gather, 15)[0].collective_kind(), proto::ALL_GATHER);
  const auto ring = import_chakra_prefix(dir / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce");
  ASSERT_EQ(ring.num_ranks(), 8u);
  const auto ring_ops = ops_of(ring, 0);
  int sends = 0, recvs = 0;
  for (const OpView op : ring_ops) {
    sends += op.is_send();
    recvs += op.is_recv();
  }
  EXPECT_GT(sends, 0);
  EXPECT_EQ(sends + recvs, static_cast<int>(ring_ops.size()) -
                               static_cast<int>(std::count_if(ring_ops.begin(), ring_ops.end(),
                                                              [](const OpView o) { return o.is_compute(); })));
  ASSERT_TRUE(ring_ops[0].is_send());
  EXPECT_EQ(ring_ops[0].peer(), 1u);
  ASSERT_TRUE(ring_ops[1].is_recv());
  EXPECT_EQ(ring_ops[1].peer(), 7u);
  EXPECT_EQ(ring_ops[1].size_bytes(), 131072u);
}

}  // namespace
}  // namespace eppsim
