#include "sim/sweep/sweep_runner.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/proto_io.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

TEST(SweepMemoryBudget, OnePointAtATimeUntilOneHasFinishedThenByItsSizePerGpu) {
  SweepMemoryBudget memory(10e9);
  EXPECT_TRUE(memory.fits(8, 0, 0.0));
  EXPECT_FALSE(memory.fits(8, 1, 0.0));  // nothing measured yet
  memory.finished(8, 4e9);               // 0.5 GB per GPU
  EXPECT_DOUBLE_EQ(memory.estimate(16), 8e9);
  EXPECT_TRUE(memory.fits(8, 1, 4e9));    // 4 + 4 <= 10
  EXPECT_FALSE(memory.fits(16, 1, 4e9));  // 4 + 8 > 10
  EXPECT_TRUE(memory.fits(64, 0, 0.0));   // alone, whatever its size
  memory.finished(8, 1e9);                // the largest per GPU is kept
  EXPECT_DOUBLE_EQ(memory.estimate(8), 4e9);
  SweepMemoryBudget unknown(0.0);
  unknown.finished(8, 4e9);
  EXPECT_TRUE(unknown.fits(1024, 7, 1e12));  // no MemAvailable: only the count bounds it
}

// Results are read from the points' files in grid order; a point without one is a failed row.
TEST(SweepResults, RowsInGridOrderWithFailuresAndNoWallClock) {
  const fs::path dir = fs::temp_directory_path() / "sweep_runner_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::path(EPPSIM_SOURCE_DIR) / "scenarios/quickstart.textproto", dir / "base.textproto");
  std::ofstream(dir / "s.textproto") << R"(
    name: "two"
    scenario: "base.textproto"
    axes { name: "batch" fields { field: "workload.global_batch" values: ["8", "16", "32"] } }
  )";
  const SweepPlan plan = read_sweep(dir / "s.textproto");
  const fs::path out = dir / "out";
  // Point 0 ran, point 1 failed, point 2 has no file.
  proto::SweepPoint ran = sweep_point_record(plan, plan.points[0], effective_point(plan, plan.points[0]).key);
  ran.mutable_report()->set_step_time_s(1.5);
  ran.mutable_report()->set_network("simple");
  ran.mutable_report()->mutable_cost()->set_capital_usd(1000);
  ran.mutable_report()->mutable_cost()->set_usd_per_million_tokens(0.5);
  ran.mutable_report()->set_tokens_per_s(1000);
  ran.mutable_report()->add_peak_memory_bytes(3);
  ran.mutable_report()->add_peak_memory_bytes(7);
  ran.mutable_report()->set_plan_summary("2 stages x 8 SP, 16 ranks\nmore");
  ran.set_wall_s(9.0);
  write_message(ran, sweep_point_file(out, ran.key()));
  proto::SweepPoint failed = sweep_point_record(plan, plan.points[1], effective_point(plan, plan.points[1]).key);
  failed.set_error("does not fit, by far");
  write_message(failed, sweep_point_file(out, failed.key()));
  ASSERT_TRUE(read_sweep_point(sweep_point_file(out, ran.key())).has_value());
  EXPECT_FALSE(read_sweep_point(out / "points" / "nothing.json").has_value());

  EXPECT_EQ(write_sweep_results(plan, out), 2u);
  std::ifstream csv(out / "results.csv");
  std::string header, row0, row1, row2;
  std::getline(csv, header);
  std::getline(csv, row0);
  std::getline(csv, row1);
  std::getline(csv, row2);
  EXPECT_THAT(header, HasSubstr("index,batch,status,network,step_time_s,tokens_per_s,mfu,peak_memory_bytes"));
  EXPECT_THAT(row0, HasSubstr("0,8,ok,simple,1.5,1000,0,7,"));
  EXPECT_THAT(row0, HasSubstr("\"2 stages x 8 SP, 16 ranks\""));
  EXPECT_THAT(row0, HasSubstr(",1000,0.5,1,"));  // capital, per million tokens, the cheapest
  EXPECT_THAT(row1, HasSubstr("1,16,failed,"));
  EXPECT_THAT(row1, HasSubstr("\"does not fit, by far\""));
  EXPECT_THAT(row2, HasSubstr("2,32,failed,"));
  EXPECT_THAT(row2, HasSubstr("no result"));
  proto::SweepResults results;
  read_message(out / "results.json", &results);
  EXPECT_EQ(results.points(), 3u);
  EXPECT_EQ(results.failed(), 2u);
  EXPECT_EQ(results.results(0).wall_s(), 0.0);  // wall-clock figures stay in the points' files
  fs::remove_all(dir);
}

}  // namespace
}  // namespace eppsim
