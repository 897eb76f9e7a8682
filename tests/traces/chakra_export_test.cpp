#include "traces/chakra/chakra_export.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "tests/traces/chakra_fixture.h"
#include "tests/schedule/schedule_fixture.h"
#include "traces/chakra/chakra_attributes.h"
#include "traces/chakra/chakra_import.h"
#include "schedule/program_ops.h"
#include "base/proto_io.h"
#include "schedule/schedule_schema.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using namespace eppsim::testing;

// Two pipeline stages of two ranks each: compute, a send/recv between stages,
// collectives on two groups and every rank, memory ops, fixed and from-work durations.
proto::Schedule sample_schedule() {
  HandSchedule h(4, {"compute", "comm", "dp"});
  const auto stage0 = h.group({0, 1});
  const auto stage1 = h.group({2, 3});
  const auto all = h.group({0, 1, 2, 3});
  // Rank 0's compute is measured and rank 2's estimated: works of their own;
  // ranks 1 and 3 share one.
  auto measured = HandSchedule::forward_layer();
  measured.set_flops(3e12);
  measured.set_memory_traffic_bytes(1 << 30);
  auto estimated = HandSchedule::forward_layer();
  estimated.set_estimated_duration_ns(2'500'000);
  for (std::uint32_t r = 0; r < 4; ++r) {
    const bool first = r < 2;
    const auto work = r == 0 ? measured : r == 2 ? estimated : HandSchedule::forward_layer();
    const auto alloc = h.memory(r, 0, true, 1 << 20);
    std::uint32_t last = 0;
    if (first) {
      last = h.compute(r, 0, {alloc}, work);
      last = h.send(r, 1, r + 2, 65536, 7, {last});
    } else {
      last = h.recv(r, 1, r - 2, 65536, 7);
      last = h.compute(r, 0, {last, alloc}, work);
    }
    last = h.collective(r, 2, first ? stage0 : stage1, 4096, proto::ALL_GATHER, {last});
    last = h.collective(r, 2, all, 8192, proto::ALL_REDUCE, {last}, r == 1 ? proto::RING : proto::ALGORITHM_AUTO);
    h.memory(r, 0, false, 1 << 20, {last});
  }
  h.fix_duration(0, 1, 123'456);
  proto::Schedule s = h.schedule();
  s.mutable_groups(0)->set_name("stage 0");
  s.mutable_header()->set_schema_version(kScheduleSchemaVersion);
  s.mutable_header()->set_producer("test");
  s.mutable_header()->mutable_model()->set_name("tiny");
  s.mutable_summary()->set_sequences(3);
  s.mutable_summary()->mutable_decisions()->set_reproduces("Megatron-LM");
  for (std::uint32_t r = 0; r < 4; ++r) {
    auto* p = s.add_placement();
    p->set_node(r / 2);
    p->set_local_gpu(r % 2);
  }
  return s;
}

TEST(ChakraExport, ImportOfExportIsTheSameSchedule) {
  const auto schedule = sample_schedule();
  const auto trace = export_chakra(schedule);
  ChakraImportOptions options;
  options.comm_groups = trace.comm_groups;
  const auto back = import_chakra(trace.ranks, "t", options);
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(schedule, back)) << diff;
}

TEST(ChakraExport, RoundTripsThroughFilesToo) {
  const auto dir = std::filesystem::temp_directory_path() / "eppsim_chakra_export_test";
  std::filesystem::remove_all(dir);
  const auto schedule = sample_schedule();
  write_chakra_trace(export_chakra(schedule), dir / "s");
  EXPECT_TRUE(std::filesystem::exists(dir / "s.3.et"));
  EXPECT_TRUE(std::filesystem::exists(dir / "s.comm_groups.json"));
  const auto back = import_chakra_prefix(dir / "s");  // finds s.comm_groups.json
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(schedule, back));
  std::filesystem::remove_all(dir);
}

// A write that fails (here the last file's temporary name is taken by a
// folder; on a full disk, any) leaves no part of the export and no temporary.
TEST(ChakraExport, AFailedWriteLeavesNothing) {
  const auto dir = std::filesystem::temp_directory_path() / "eppsim_chakra_export_fail_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / fmt::format("s.comm_groups.json.partial-{}", ::getpid()) / "x");
  EXPECT_ANY_THROW(write_chakra_trace(export_chakra(sample_schedule()), dir / "s"));
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) left.push_back(entry.path().filename().string());
  EXPECT_THAT(left, ::testing::ElementsAre(fmt::format("s.comm_groups.json.partial-{}", ::getpid())));
  std::filesystem::remove_all(dir);
}

TEST(ChakraExport, NodesCarryWhatAstraSimReads) {
  const auto trace = export_chakra(sample_schedule());
  // Groups: id + 1 (ASTRA-sim reads pg_name "0" as every rank).
  EXPECT_EQ(format_chakra_comm_groups(trace.comm_groups), "{\n  \"1\": [0, 1],\n  \"2\": [2, 3],\n  \"3\": [0, 1, 2, 3]\n}\n");
  const auto& rank0 = trace.ranks[0].nodes;
  ASSERT_EQ(rank0.size(), 6u);
  EXPECT_EQ(rank0[0].type(), chakra::METADATA_NODE);
  EXPECT_EQ(rank0[1].type(), chakra::COMP_NODE);
  EXPECT_EQ(rank0[1].duration_micros(), 123u);  // 123.456 us, rounded
  EXPECT_EQ(unsigned_attribute(rank0[1].attr(), chakra_names::kNumOps, "n"), 3'000'000'000'000u);
  EXPECT_EQ(rank0[2].type(), chakra::COMM_SEND_NODE);
  EXPECT_EQ(unsigned_attribute(rank0[2].attr(), chakra_names::kCommDst, "n"), 2u);
  EXPECT_EQ(unsigned_attribute(rank0[2].attr(), chakra_names::kCommSize, "n"), 65536u);
  EXPECT_EQ(rank0[3].type(), chakra::COMM_COLL_NODE);
  EXPECT_EQ(unsigned_attribute(rank0[3].attr(), chakra_names::kCommType, "n"), static_cast<std::uint64_t>(chakra::ALL_GATHER));
  EXPECT_EQ(string_attribute(rank0[3].attr(), chakra_names::kPgName, "n"), "1");
  EXPECT_EQ(string_attribute(rank0[4].attr(), chakra_names::kPgName, "n"), "3");
  const auto* cpu = find_attribute(rank0[4].attr(), chakra_names::kIsCpuOp);
  ASSERT_NE(cpu, nullptr);
  EXPECT_FALSE(cpu->bool_val());
  // Stream order as control dependencies: the free (stream 0) follows the compute (stream 0).
  EXPECT_THAT(std::vector<std::uint64_t>(rank0[5].ctrl_deps().begin(), rank0[5].ctrl_deps().end()), ::testing::ElementsAre(1u));
  EXPECT_EQ(trace.ranks[2].nodes[2].duration_micros(), 2500u);  // the estimate, for a from-work op
}

TEST(ChakraExport, ForeignToolsSeeOnlyChakraWithoutTheEppsimAttributes) {
  // Stripped of eppsim.* attributes, the export reads as a foreign trace: every
  // op still there, streams by kind, compute priced by its duration_micros.
  auto trace = export_chakra(sample_schedule());
  for (auto& rank : trace.ranks) {
    rank.metadata.clear_attr();
    for (auto& node : rank.nodes) {
      auto* attrs = node.mutable_attr();
      for (int i = attrs->size() - 1; i >= 0; --i) {
        if (attrs->Get(i).name().starts_with("eppsim.")) attrs->DeleteSubrange(i, 1);
      }
    }
  }
  ChakraImportOptions options;
  options.comm_groups = trace.comm_groups;
  const auto s = import_chakra(trace.ranks, "t", options);
  const auto ops = ops_of(s, 0);
  ASSERT_EQ(ops.size(), 4u);  // memory ops are metadata nodes: gone
  EXPECT_EQ(ops[0].fixed_duration_ns(), 123'000);
  ASSERT_TRUE(ops[2].is_collective());
  EXPECT_EQ(ops[2].group(), 0u);
}

}  // namespace
}  // namespace eppsim
