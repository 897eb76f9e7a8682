#include "traces/csv_export.h"

#include <string>

#include <gtest/gtest.h>

#include "base/proto_io.h"
#include "schedule/trace_events.h"
#include "tests/schedule/sample_messages.h"

namespace eppsim {
namespace {

TEST(OpsCsv, OneRowPerEventInTraceOrder) {
  const std::string expected =
      "rank,op,stream,kind,phase,collective,chunk,stage,peer,group,size_bytes,start_s,end_s,duration_s\n"
      "0,0,compute,compute,forward,,3,1,0,0,0,0.000000000,0.000001500,0.000001500\n"
      "0,1,comm,send,,,0,0,1,0,1048576,0.000001500,0.000002750,0.000001250\n"
      "1,0,comm,recv,,,0,0,0,0,1048576,0.000001000,0.000002750,0.000001750\n"
      "1,1,compute,compute,backward,,3,2,0,0,0,0.000002750,1.000002750,1.000000000\n"
      "0,2,comm,collective,,all_reduce,0,0,0,2,8589934592,0.000003000,0.000004000,0.000001000\n"
      "1,2,compute,memory,,,0,0,0,0,4096,0.000005000,0.000005000,0.000000000\n";
  EXPECT_EQ(ops_csv(testing::sample_trace()), expected);
}

TEST(OpsCsv, QuotesAwkwardStreamNamesAndFallsBackToIndices) {
  proto::Trace trace;
  trace.add_stream_names("a,\"b\"");
  add_event(*trace.mutable_op_events(), {.kind = proto::COLLECTIVE, .collective = proto::REDUCE_SCATTER,
                                         .start_ns = -5, .end_ns = 1'234'567'890'123});
  add_event(*trace.mutable_op_events(), {.stream = 7, .kind = proto::COMPUTE, .phase = proto::OPTIMIZER});
  const std::string csv = ops_csv(trace);
  EXPECT_NE(csv.find("0,0,\"a,\"\"b\"\"\",collective,,reduce_scatter,0,0,0,0,0,-0.000000005,1234.567890123,1234.567890128\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("0,0,7,compute,optimizer,,"), std::string::npos) << csv;
}

TEST(MemoryCsv, OneRowPerSample) {
  EXPECT_EQ(memory_csv(testing::sample_trace()),
            "rank,time_s,bytes\n"
            "0,0.000000000,1000\n"
            "0,0.000001500,81000000000\n"
            "1,0.000005000,4096\n");
}

TEST(RanksCsv, OneRowPerRankOfTheReport) {
  EXPECT_EQ(ranks_csv(testing::sample_report()),
            "rank,node,compute_s,recompute_s,communication_s,bubble_s,peak_memory_bytes\n"
            "0,0,0.500000000,0.125000000,0.000000001,0.333333333,81000000000\n"
            "1,0,1.500000000,0.125000000,0.000000001,0.333333333,4096\n");
}

TEST(WriteCsv, FilesHoldTheSameText) {
  const auto dir = testing::fresh_dir("csv");
  const proto::Trace trace = testing::sample_trace();
  const proto::Report report = testing::sample_report();
  write_ops_csv(trace, dir / "ops.csv");
  write_memory_csv(trace, dir / "memory.csv");
  write_ranks_csv(report, dir / "nested" / "ranks.csv");
  EXPECT_EQ(read_file(dir / "ops.csv"), ops_csv(trace));
  EXPECT_EQ(read_file(dir / "memory.csv"), memory_csv(trace));
  EXPECT_EQ(read_file(dir / "nested" / "ranks.csv"), ranks_csv(report));
}

TEST(WriteCsv, StreamsFilesLargerThanTheBuffer) {
  const auto dir = testing::fresh_dir("csv_large");
  proto::Trace trace = testing::sample_trace();
  const OpEventFields event = fields_of(events_of(trace)[0]);
  const proto::MemorySample sample = trace.memory(0);
  for (int i = 0; i < 30000; ++i) {
    add_event(*trace.mutable_op_events(), event);
    *trace.add_memory() = sample;
  }
  write_ops_csv(trace, dir / "ops.csv");
  write_memory_csv(trace, dir / "memory.csv");
  EXPECT_GT(ops_csv(trace).size(), std::size_t{2} << 20);
  EXPECT_EQ(read_file(dir / "ops.csv"), ops_csv(trace));
  EXPECT_EQ(read_file(dir / "memory.csv"), memory_csv(trace));
}

}  // namespace
}  // namespace eppsim
