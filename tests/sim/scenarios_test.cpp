// Every shipped scenario is a test: it must load, plan and simulate, satisfy
// the report's invariants and, where scenarios/NAME.expected.textproto exists,
// reproduce its expected headline values within their tolerances.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include "tests/sim/test_scenarios.h"
#include "sim/run.h"
#include "base/proto_io.h"
#include "proto/report.pb.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;

// Scenarios above this many GPUs are topology studies; their training step is
// not simulated in unit tests.
constexpr std::uint32_t kLargestTrainingRunTested = 16384;

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(EPPSIM_SOURCE_DIR) / "scenarios")) {
    const auto name = entry.path().filename().string();
    // Sweeps (tests/sim/sweep/): scenarios/studies/*.textproto and each study's sweep.textproto.
    const bool study = entry.path().parent_path().filename() == "studies" || name == "sweep.textproto";
    if (entry.is_regular_file() && entry.path().extension() == ".textproto" && !study &&
        name.find(".expected.") == std::string::npos) {
      found.push_back(fs::relative(entry.path(), EPPSIM_SOURCE_DIR).string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// A numeric field of the report, possibly inside a message ("collective.time_s").
double report_field(const proto::Report& report, const std::string& field) {
  const google::protobuf::Message* message = &report;
  const google::protobuf::FieldDescriptor* descriptor = nullptr;
  std::string rest = field;
  while (true) {
    const auto dot = rest.find('.');
    descriptor = message->GetDescriptor()->FindFieldByName(rest.substr(0, dot));
    if (dot == std::string::npos || descriptor == nullptr ||
        descriptor->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE || descriptor->is_repeated()) {
      if (dot != std::string::npos) descriptor = nullptr;
      break;
    }
    message = &message->GetReflection()->GetMessage(*message, descriptor);
    rest = rest.substr(dot + 1);
  }
  if (descriptor == nullptr || descriptor->is_repeated()) {
    ADD_FAILURE() << "expected value names no numeric Report field: " << field;
    return NAN;
  }
  const auto* reflection = message->GetReflection();
  switch (descriptor->cpp_type()) {
    case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE: return reflection->GetDouble(*message, descriptor);
    case google::protobuf::FieldDescriptor::CPPTYPE_UINT32: return reflection->GetUInt32(*message, descriptor);
    case google::protobuf::FieldDescriptor::CPPTYPE_UINT64: return static_cast<double>(reflection->GetUInt64(*message, descriptor));
    default:
      ADD_FAILURE() << "Report field is not numeric: " << field;
      return NAN;
  }
}

class ShippedScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedScenario, RunsAndMeetsItsExpectations) {
  const fs::path path = fs::path(EPPSIM_SOURCE_DIR) / GetParam();
  const auto scenario = load_scenario(path);
  if (scenario.cluster.total_gpus() > kLargestTrainingRunTested) {
    GTEST_SKIP() << GetParam() << " has " << scenario.cluster.total_gpus()
                 << " GPUs: a topology study (tests/sim/topo_test.cpp); its training step is benchmark material";
  }
  const auto result = run_scenario(scenario);
  const auto& report = result.report;

  EXPECT_GT(report.step_time_s(), 0.0);
  if (scenario.workload.collective) {
    // A collective micro-benchmark: no model FLOPs, its own figures instead.
    ASSERT_TRUE(report.has_collective());
    EXPECT_GT(report.collective().time_s(), 0.0);
    EXPECT_GT(report.collective().busbw_bps(), 0.0);
  } else {
    EXPECT_GT(report.mfu(), 0.0);
    EXPECT_LT(report.mfu(), 1.0);
  }
  for (const auto& rank : report.per_rank()) {
    const auto& b = rank.breakdown_s();
    EXPECT_NEAR(b.compute() + b.recompute() + b.communication() + b.bubble(), report.step_time_s(), 1e-6)
        << "rank " << rank.rank();
    EXPECT_GE(b.bubble(), -1e-9);
    EXPECT_LE(rank.peak_memory_bytes(), report.memory_limit_bytes());
  }

  auto expected_path = path;
  expected_path.replace_extension(".expected.textproto");
  if (!fs::exists(expected_path)) return;
  proto::ExpectedReport expected;
  read_message(expected_path, &expected);
  ASSERT_GT(expected.values_size(), 0) << expected_path;
  for (const auto& value : expected.values()) {
    const double actual = report_field(report, value.field());
    EXPECT_NEAR(actual, value.value(), value.relative_tolerance() * std::abs(value.value()))
        << GetParam() << ": " << value.field();
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ShippedScenario, ::testing::ValuesIn(shipped_scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(Quickstart, SameSeedSameTraceBytes) {
  const auto scenario = testing::load_quickstart();
  const auto first = run_scenario(scenario);
  const auto second = run_scenario(scenario);
  EXPECT_EQ(first.trace.SerializeAsString(), second.trace.SerializeAsString());
  EXPECT_EQ(first.schedule.SerializeAsString(), second.schedule.SerializeAsString());
}

TEST(Quickstart, ADifferentSeedDrawsADifferentBatch) {
  const auto a = testing::load_quickstart();
  const auto b = testing::load_quickstart({"seed=2"});
  EXPECT_NE(run_scenario(a).report.tokens(), run_scenario(b).report.tokens());
}

}  // namespace
}  // namespace eppsim
