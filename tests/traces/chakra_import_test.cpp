#include "traces/chakra/chakra_import.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/errors.h"
#include "tests/traces/chakra_fixture.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace eppsim::testing;

std::vector<std::uint32_t> deps_of(const proto::Op& op) { return {op.deps().begin(), op.deps().end()}; }

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
  const auto& r0 = s.programs(0).ops();
  ASSERT_EQ(r0.size(), 2);
  EXPECT_EQ(r0[0].compute().phase(), proto::FORWARD);
  EXPECT_EQ(r0[0].duration_source(), proto::DURATION_FIXED);
  EXPECT_EQ(r0[0].fixed_duration_ns(), 5000);
  EXPECT_EQ(r0[0].stream(), 0u);
  EXPECT_EQ(r0[1].send().peer(), 1u);
  EXPECT_EQ(r0[1].send().size_bytes(), 4096u);
  EXPECT_EQ(r0[1].send().tag(), 3u);
  EXPECT_EQ(r0[1].stream(), 1u);
  EXPECT_EQ(r0[1].duration_source(), proto::DURATION_FROM_WORK);
  EXPECT_THAT(deps_of(r0[1]), ElementsAre(0u));
  const auto& r1 = s.programs(1).ops();
  EXPECT_EQ(r1[0].recv().peer(), 0u);
  EXPECT_EQ(r1[0].stream(), 2u);
  EXPECT_THAT(deps_of(r1[1]), ElementsAre(0u));
}

TEST(ChakraImport, NodesAreOrderedTopologicallyTiesInFileOrder) {
  // Node 1 depends on node 3, which comes later in the file.
  const auto s = import_chakra({chakra_rank({comp_node(0, 1), comp_node(1, 1, {3}), comp_node(2, 1), comp_node(3, 1, {}),
                                             })},
                               "t");
  const auto& ops = s.programs(0).ops();
  ASSERT_EQ(ops.size(), 4);
  // Order: 0, 2, 3, 1 (node 1 waits for node 3).
  EXPECT_TRUE(ops[0].deps().empty());
  EXPECT_THAT(deps_of(ops[3]), ElementsAre(2u));
}

TEST(ChakraImport, ControlAndDataDependenciesBothCount) {
  const auto s = import_chakra({chakra_rank({comp_node(0, 1), comp_node(1, 1), chakra_node(2, chakra::COMP_NODE, {0}, {1})})}, "t");
  EXPECT_THAT(deps_of(s.programs(0).ops(2)), ElementsAre(1u, 0u));
}

TEST(ChakraImport, MetadataNodesStandForTheirDependencies) {
  const auto s = import_chakra(
      {chakra_rank({comp_node(0, 1), chakra_node(1, chakra::METADATA_NODE, {0}), comp_node(2, 1, {1})})}, "t");
  ASSERT_EQ(s.programs(0).ops_size(), 2);
  EXPECT_THAT(deps_of(s.programs(0).ops(1)), ElementsAre(0u));
}

TEST(ChakraImport, MemoryNodesTakeTheirRecordedTimeOnTheMemoryStream) {
  auto load = chakra_node(0, chakra::MEM_LOAD_NODE);
  load.set_duration_micros(7);
  add_int64_attribute(load.mutable_attr(), chakra_names::kTensorSize, 1 << 20);
  const auto s = import_chakra({chakra_rank({load})}, "t");
  const auto& op = s.programs(0).ops(0);
  EXPECT_EQ(op.stream(), 4u);
  EXPECT_EQ(op.fixed_duration_ns(), 7000);
  EXPECT_EQ(op.compute().memory_traffic_bytes(), 1u << 20);
}

TEST(ChakraImport, ComputeWithoutDurationIsPricedByTheRoofline) {
  auto comp = chakra_node(0, chakra::COMP_NODE);
  add_int64_attribute(comp.mutable_attr(), chakra_names::kNumOps, 2'000'000'000);   // 2 GFLOP
  add_int64_attribute(comp.mutable_attr(), chakra_names::kTensorSize, 1'000'000);  // 1 MB
  ChakraImportOptions options;
  options.peak_flops_per_s = 1e12;      // 2 ms of compute
  options.memory_bytes_per_s = 1e9;     // 1 ms of memory
  const auto s = import_chakra({chakra_rank({comp})}, "t", options);
  EXPECT_EQ(s.programs(0).ops(0).fixed_duration_ns(), 2'000'000);
  EXPECT_DOUBLE_EQ(s.programs(0).ops(0).compute().flops(), 2e9);
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
  EXPECT_EQ(s.programs(3).ops(0).collective().group(), 1u);
  EXPECT_EQ(s.programs(3).ops(0).collective().kind(), proto::ALL_GATHER);
  EXPECT_EQ(s.programs(3).ops(1).collective().group(), 2u);
  EXPECT_EQ(s.programs(3).ops(1).collective().size_bytes(), 2048u);
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
    ASSERT_EQ(program.ops_size(), 1);
    EXPECT_EQ(program.ops(0).collective().kind(), proto::ALL_REDUCE);
    EXPECT_EQ(program.ops(0).collective().size_bytes(), 1u << 20);
  }
  const auto all_gather = import_chakra_prefix(dir / "all_gather_16npus_1MB" / "all_gather");
  EXPECT_EQ(all_gather.num_ranks(), 16u);
  EXPECT_EQ(all_gather.programs(15).ops(0).collective().kind(), proto::ALL_GATHER);
  const auto ring = import_chakra_prefix(dir / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce");
  ASSERT_EQ(ring.num_ranks(), 8u);
  int sends = 0, recvs = 0;
  for (const auto& op : ring.programs(0).ops()) {
    sends += op.has_send();
    recvs += op.has_recv();
  }
  EXPECT_GT(sends, 0);
  EXPECT_EQ(sends + recvs, ring.programs(0).ops_size() - static_cast<int>(std::count_if(ring.programs(0).ops().begin(), ring.programs(0).ops().end(), [](const proto::Op& o) { return o.has_compute(); })));
  EXPECT_EQ(ring.programs(0).ops(0).send().peer(), 1u);
  EXPECT_EQ(ring.programs(0).ops(1).recv().peer(), 7u);
  EXPECT_EQ(ring.programs(0).ops(1).recv().size_bytes(), 131072u);
}

}  // namespace
}  // namespace eppsim
