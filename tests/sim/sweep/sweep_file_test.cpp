#include "sim/sweep/sweep_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

// A sweep file in a fresh folder beside a copy of the quickstart scenario.
class SweepFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sweep_file_test_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy_file(fs::path(EPPSIM_SOURCE_DIR) / "scenarios/quickstart.textproto", dir_ / "base.textproto");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& text) {
    const fs::path file = dir_ / "s.sweep.textproto";
    std::ofstream(file) << text;
    return file;
  }
  std::string error_of(const std::string& text) {
    try {
      read_sweep(write(text));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(SweepFile, TheGridIsEveryCombinationFirstAxisSlowest) {
  const SweepPlan plan = read_sweep(write(R"(
    name: "grid"
    scenario: "base.textproto"
    set: "workload.global_batch=8"
    axes { fields { field: "plan.strategy" values: ["epp", "ulysses"] } }
    axes { name: "len" fields { field: "workload.max_length" range { start: 1024 stop: 4096 factor: 2 } } }
  )"));
  ASSERT_EQ(plan.bases.size(), 1u);
  EXPECT_EQ(plan.bases[0].file, plan.file.parent_path() / "base.textproto");
  EXPECT_THAT(plan.axes, ElementsAre("plan.strategy", "len"));
  ASSERT_EQ(plan.points.size(), 6u);
  EXPECT_THAT(plan.points[0].values, ElementsAre("epp", "1024"));
  EXPECT_THAT(plan.points[2].values, ElementsAre("epp", "4096"));
  EXPECT_THAT(plan.points[3].values, ElementsAre("ulysses", "1024"));
  EXPECT_THAT(plan.points[4].overrides,
              ElementsAre("workload.global_batch=8", "plan.strategy=ulysses", "workload.max_length=2048"));
  for (std::uint32_t i = 0; i < plan.points.size(); ++i) EXPECT_EQ(plan.points[i].index, i);
}

TEST_F(SweepFile, ZippedFieldsStepTogetherAndFiltersLeavePointsOut) {
  const SweepPlan plan = read_sweep(write(R"(
    scenario: "base.textproto"
    axes { name: "gpu" fields { field: "cluster.gpu.preset" values: ["A100-80GB", "H100-80GB"] }
                       fields { field: "cluster.intra_node.bandwidth" values: ["300GB/s", "450GB/s"] } }
    axes { fields { field: "plan.strategy" values: ["epp", "ulysses", "flexsp"] } }
    skip { when { axis: "gpu" values: "A100-80GB" } when { axis: "plan.strategy" values: ["ulysses", "flexsp"] } }
  )"));
  ASSERT_EQ(plan.points.size(), 4u);
  EXPECT_THAT(plan.points[0].values, ElementsAre("A100-80GB", "epp"));
  EXPECT_THAT(plan.points[1].values, ElementsAre("H100-80GB", "epp"));
  EXPECT_THAT(plan.points[1].overrides, ElementsAre("cluster.gpu.preset=H100-80GB",
                                                    "cluster.intra_node.bandwidth=450GB/s", "plan.strategy=epp"));
  EXPECT_EQ(plan.points[3].index, 3u);
}

TEST_F(SweepFile, NoAxesIsTheBaseScenarioAlone) {
  const SweepPlan plan = read_sweep(write(R"(scenario: "base.textproto")"));
  ASSERT_EQ(plan.points.size(), 1u);
  EXPECT_TRUE(plan.points[0].overrides.empty());
}

TEST_F(SweepFile, AScenarioAxisGivesEachPointItsBaseScenario) {
  fs::copy_file(fs::path(EPPSIM_SOURCE_DIR) / "scenarios/showcase.textproto", dir_ / "other.textproto");
  const SweepPlan plan = read_sweep(write(R"(
    axes { name: "setting" fields { field: "scenario" values: ["base.textproto", "other.textproto"] }
                           fields { field: "seed" values: ["3", "4"] } }
    axes { fields { field: "plan.strategy" values: ["epp", "ulysses"] } }
  )"));
  ASSERT_EQ(plan.bases.size(), 2u);
  EXPECT_EQ(plan.bases[1].file, plan.file.parent_path() / "other.textproto");
  EXPECT_EQ(plan.bases[1].scenario.name(), "showcase");
  ASSERT_EQ(plan.points.size(), 4u);
  EXPECT_THAT(plan.points[2].values, ElementsAre("other", "epp"));  // a file by its name
  EXPECT_EQ(plan.points[2].base, 1u);
  EXPECT_EQ(plan.points[1].base, 0u);
  // The scenario field is not an override; its zipped partner is.
  EXPECT_THAT(plan.points[2].overrides, ElementsAre("seed=4", "plan.strategy=epp"));
}

TEST_F(SweepFile, AScenarioAxisIsCheckedLikeTheSweepsScenario) {
  EXPECT_THAT(error_of(R"(
    scenario: "base.textproto"
    axes { fields { field: "scenario" values: ["base.textproto"] } })"),
              HasSubstr("s.sweep.textproto:3: axes[0].fields[0].field: the sweep's `scenario` is set"));
  EXPECT_THAT(error_of(R"(
    axes { fields { field: "scenario" values: ["base.textproto", "missing.textproto"] } })"),
              HasSubstr("s.sweep.textproto:2: axes[0].fields[0].values: "));
  EXPECT_THAT(error_of(R"(
    axes { fields { field: "scenario" range { start: 1 stop: 2 step: 1 } } })"),
              HasSubstr("axes[0].fields[0].range: `scenario` takes values"));
  EXPECT_THAT(error_of(R"(axes { fields { field: "plan.strategy" values: "epp" } })"),
              HasSubstr("scenario: is required"));
}

TEST_F(SweepFile, LabelsNameTheStepsOfAnAxis) {
  const SweepPlan plan = read_sweep(write(R"(
    scenario: "base.textproto"
    axes { name: "effects" labels: ["roofline", "shapes", "shapes+interference"]
           fields { field: "cost_model.compute" values: ["ROOFLINE", "SHAPED", "SHAPED"] }
           fields { field: "cost_model.interference.enabled" values: ["false", "false", "true"] } }
    skip { when { axis: "effects" values: "shapes" } }
  )"));
  ASSERT_EQ(plan.points.size(), 2u);
  EXPECT_THAT(plan.points[1].values, ElementsAre("shapes+interference"));
  EXPECT_THAT(plan.points[1].overrides, ElementsAre("cost_model.compute=SHAPED", "cost_model.interference.enabled=true"));
  EXPECT_THAT(error_of(R"(
    scenario: "base.textproto"
    axes { labels: ["a"] fields { field: "seed" values: ["1", "2"] } })"),
              HasSubstr(":3: axes[0].labels: 1 labels for 2 steps"));
  EXPECT_THAT(error_of(R"(
    scenario: "base.textproto"
    axes { labels: ["a", "a"] fields { field: "seed" values: ["1", "2"] } })"),
              HasSubstr("axes[0].labels: labels must be distinct"));
}

TEST_F(SweepFile, SelectPointsKeepsTheNamedIndices) {
  SweepPlan plan = read_sweep(write(R"(
    scenario: "base.textproto"
    axes { fields { field: "seed" range { start: 1 stop: 10 step: 1 } } }
  )"));
  select_points(&plan, "0,3,7-9");
  ASSERT_EQ(plan.points.size(), 5u);
  EXPECT_EQ(plan.points[1].index, 3u);
  EXPECT_EQ(plan.points[4].index, 9u);
  for (const std::string bad : {"", "1,", "x", "3-1", "10", "2-12"}) {
    SweepPlan copy = plan;
    EXPECT_THROW(select_points(&copy, bad), InputError) << bad;
  }
  try {
    select_points(&plan, "3-1");
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--points 3-1: '3-1' runs backwards"));
  }
}

TEST(SweepRange, StepsAndFactorsPrintWholeNumbersWhole) {
  proto::SweepRange range;
  range.set_start(1);
  range.set_stop(2);
  range.set_step(0.25);
  EXPECT_THAT(range_values(range, "r"), ElementsAre("1", "1.25", "1.5", "1.75", "2"));
  range.set_step(0);
  range.set_start(16384);
  range.set_stop(100000);
  range.set_factor(2);
  EXPECT_THAT(range_values(range, "r"), ElementsAre("16384", "32768", "65536"));
}

TEST(SweepRange, BrokenRangesAreRefused) {
  const auto error = [](double start, double stop, double step, double factor) {
    proto::SweepRange range;
    range.set_start(start);
    range.set_stop(stop);
    range.set_step(step);
    range.set_factor(factor);
    try {
      range_values(range, "axes[0]");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error(1, 2, 1, 2), HasSubstr("exactly one of step"));
  EXPECT_THAT(error(1, 2, 0, 0), HasSubstr("exactly one of step"));
  EXPECT_THAT(error(1, 2, -1, 0), HasSubstr("step must be > 0"));
  EXPECT_THAT(error(1, 2, 0, 1), HasSubstr("factor > 1"));
  EXPECT_THAT(error(3, 2, 1, 0), HasSubstr("start 3 is past stop 2"));
  EXPECT_THAT(error(0, 2, 0, 2), HasSubstr("must start above 0"));
  EXPECT_THAT(error(1, 1e12, 1, 0), HasSubstr("more than 1048576 values"));
  EXPECT_THAT(error(1, std::numeric_limits<double>::infinity(), 1, 0), HasSubstr("finite"));
}

TEST_F(SweepFile, BadInputNamesTheFileLineAndField) {
  EXPECT_THAT(error_of("scenario: \"base.textproto\"\naxes { fields { field: \"plan.bogus\" values: \"1\" } }"),
              HasSubstr("s.sweep.textproto:2: axes[0].fields[0].values: --set plan.bogus=1: plan has no field 'bogus'"));
  EXPECT_THAT(
      error_of("scenario: \"base.textproto\"\n\naxes { fields { field: \"workload.global_batch\" values: \"many\" } }"),
      HasSubstr("s.sweep.textproto:3: axes[0].fields[0].values: --set workload.global_batch=many"));
  EXPECT_THAT(error_of("scenario: \"base.textproto\"\naxes { name: \"a\" }"),
              HasSubstr(":2: axes[0].fields: an axis needs at least one field"));
  EXPECT_THAT(error_of("scenario: \"base.textproto\"\naxes { fields { field: \"plan.strategy\" } }"),
              HasSubstr("axes[0].fields[0].values: an axis field needs values or a range"));
  EXPECT_THAT(error_of("scenario: \"base.textproto\"\naxes { fields { field: \"plan.strategy\" values: [\"epp\", \"ulysses\"] }"
                       " fields { field: \"workload.global_batch\" values: \"8\" } }"),
              HasSubstr("zipped with plan.strategy (2 values), it has 1"));
  EXPECT_THAT(error_of("scenario: \"base.textproto\"\naxes { fields { field: \"plan.strategy\" values: \"epp\" } }\n"
                       "axes { fields { field: \"plan.strategy\" values: \"ulysses\" } }"),
              HasSubstr(":3: axes[1].name: a second axis named 'plan.strategy'"));
  EXPECT_THAT(error_of("scenario: \"base.textproto\"\nskip { when { axis: \"gpu\" values: \"x\" } }"),
              HasSubstr(":2: skip[0].when[0].axis: no axis is named 'gpu'"));
  EXPECT_THAT(error_of("axes { fields { field: \"plan.strategy\" values: \"epp\" } }"),
              HasSubstr("scenario: is required"));
  EXPECT_THAT(error_of("scenario: \"missing.textproto\""), HasSubstr("s.sweep.textproto:1: scenario: "));
  EXPECT_THAT(error_of("scenario: \"base.textproto\"\nset: \"plan.nope=1\""), HasSubstr(":2: set[0]: --set plan.nope=1"));
  EXPECT_THAT(error_of("scenario: \"base.textproto\"\nspeed: 3"), HasSubstr("s.sweep.textproto:2:"));
  EXPECT_THAT(error_of("scenario: \"base.textproto\"\n"
                       "axes { fields { field: \"seed\" range { start: 1 stop: 1024 step: 1 } } }\n"
                       "axes { fields { field: \"workload.global_batch\" range { start: 1 stop: 1024 step: 1 } } }\n"
                       "axes { fields { field: \"workload.max_length\" range { start: 1 stop: 2 step: 1 } } }"),
              HasSubstr(":4: axes[2]: the grid has more than 1048576 points"));
}

// Each shipped sweep reads and checks: scenarios/studies/*.textproto and each
// study's STUDY/sweep.textproto (tests/cli/sweep_test.sh and studies_test.py run them).
TEST(ShippedStudies, EveryStudyReads) {
  int count = 0;
  const fs::path studies = fs::path(EPPSIM_SOURCE_DIR) / "scenarios/studies";
  for (const auto& entry : fs::recursive_directory_iterator(studies)) {
    const bool sweep = entry.path().parent_path() == studies ? entry.path().extension() == ".textproto"
                                                              : entry.path().filename() == "sweep.textproto";
    if (!sweep) continue;
    SCOPED_TRACE(entry.path().string());
    ++count;
    const SweepPlan plan = read_sweep(entry.path());
    EXPECT_FALSE(plan.points.empty());
    EXPECT_FALSE(plan.sweep.name().empty());
  }
  EXPECT_GE(count, 1);
}

TEST(PointKey, FollowsTheEffectiveScenario) {
  proto::Scenario a, b;
  a.set_name("x");
  b.set_name("x");
  EXPECT_EQ(point_key(a), point_key(b));
  EXPECT_EQ(point_key(a).size(), 16u);
  b.mutable_workload()->set_global_batch(8);
  EXPECT_NE(point_key(a), point_key(b));
}

}  // namespace
}  // namespace eppsim
