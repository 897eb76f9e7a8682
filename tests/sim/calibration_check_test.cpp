// Scoring a calibration on benchmark rows it was not fitted to
// (sim/calibration_check.h): interference by one factor and by size, comm
// fits, layer fits, and rows no fit covers.
#include "sim/calibration_check.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/calibrate.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

proto::BenchFile bench(const std::string& kind) {
  proto::BenchFile b;
  b.set_eppsim_bench(1);
  b.set_kind(kind);
  b.set_backend("cpu");
  b.set_device("test CPU");
  b.set_ranks(2);
  b.mutable_model()->set_name("tiny");
  return b;
}

// A send-recv interference row of `bytes`: compute and comm 0.1 s alone, slowed by the factors beside.
void add_interference(proto::BenchFile& b, std::uint64_t bytes, double compute_factor, double comm_factor) {
  auto* r = b.add_results();
  r->set_op("send-recv");
  r->set_bytes(bytes);
  r->set_group_size(2);
  r->set_crosses_nodes(false);
  r->set_tokens(1024);
  r->set_correct(true);
  r->set_compute_alone_s(0.1);
  r->set_compute_beside_s(0.1 * compute_factor);
  r->set_comm_alone_s(0.1);
  r->set_comm_beside_s(0.1 * comm_factor);
}

const proto::FitQuality& score(const HeldOutCheck& check, const std::string& fit) {
  for (const auto& s : check.scores) {
    if (s.fit == fit) return s.quality;
  }
  ADD_FAILURE() << "no score " << fit;
  static const proto::FitQuality none;
  return none;
}

// Fitted at 64 KiB (compute x1, comm x8) and 16 MiB (x5, x2); held out at
// 1 MiB, halfway in log size, where the slowdowns are the geometric means
// (x2.236, x4): by size predicts them exactly, one factor (compute 1.2 / 1.04
// = 1.154, relative least squares over x1 and x5) misses by 48%.
TEST(CalibrationCheck, InterferenceBySizeAgainstOneFactorOnHeldOutSizes) {
  proto::BenchFile fitted = bench("interference");
  add_interference(fitted, 1u << 16, 1.0, 8.0);
  add_interference(fitted, 1u << 24, 5.0, 2.0);
  const std::array files{fitted};
  const std::array names{std::string("fitted.json")};
  const proto::Calibration c = calibrate(files, names);
  proto::BenchFile held = bench("interference");
  add_interference(held, 1u << 20, std::sqrt(5.0), 4.0);
  const HeldOutCheck check = check_held_out(c, std::array{held});
  ASSERT_EQ(check.scores.size(), 4u);
  EXPECT_LT(score(check, "beside point-to-point, compute, by size").max_relative_error(), 1e-9);
  EXPECT_LT(score(check, "beside point-to-point, comm, by size").max_relative_error(), 1e-9);
  EXPECT_NEAR(score(check, "beside point-to-point, compute, one factor").rms_relative_error(),
              (std::sqrt(5.0) - 1.2 / 1.04) / std::sqrt(5.0), 1e-9);
  EXPECT_EQ(score(check, "beside point-to-point, compute, one factor").points(), 1u);
  EXPECT_EQ(check.unscored_rows, 0u);
  EXPECT_THAT(held_out_summary(check), HasSubstr("beside point-to-point, compute, by size"));
}

// Comm rows by their (op, group size, crosses_nodes) fit; other ops and
// attention rows are counted, not scored.
TEST(CalibrationCheck, CommRowsByTheirFitAndUncoveredRowsCounted) {
  proto::BenchFile comm = bench("comm");
  for (const double bytes : {1e4, 1e6, 1e8}) {
    auto* r = comm.add_results();
    r->set_op("all-reduce");
    r->set_bytes(static_cast<std::uint64_t>(bytes));
    r->set_group_size(2);
    r->set_crosses_nodes(false);
    r->set_time_s(1e-5 + bytes / 1e10);  // all-reduce over 2: bus bytes = bytes
    r->set_correct(true);
  }
  const std::array names{std::string("comm.json")};
  const proto::Calibration c = calibrate(std::array{comm}, names);
  proto::BenchFile held = bench("comm");
  *held.add_results() = comm.results(1);
  held.mutable_results(0)->set_time_s(2.0 * held.results(0).time_s());  // twice the fit's time
  *held.add_results() = comm.results(1);
  held.mutable_results(1)->set_op("all-gather");
  proto::BenchFile compute = bench("compute");
  compute.add_results()->set_kernel("attention");
  const HeldOutCheck check = check_held_out(c, std::array{held, compute});
  ASSERT_EQ(check.scores.size(), 1u);
  EXPECT_EQ(check.scores[0].fit, "all-reduce n=2 intra-node");
  EXPECT_NEAR(check.scores[0].quality.max_relative_error(), 0.5, 1e-6);
  EXPECT_EQ(check.unscored_rows, 2u);
  EXPECT_THAT(held_out_summary(check), HasSubstr("(2 rows no fit covers, not scored)"));
}

}  // namespace
}  // namespace eppsim
