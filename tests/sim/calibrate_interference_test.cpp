// eppsim calibrate's interference fits (sim/calibrate.h): per class of
// traffic, one factor and one per message size, from `eppsim-bench
// interference` rows, and the rows' errors.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/proto_io.h"
#include "sim/calibrate.h"
#include "tests/sim/calibrate_fixture.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using testing::calibrate_one;
using testing::error_of;
using testing::fresh_dir;
using testing::read_error;

// An interference bench: per (op, crosses_nodes, factors) a row per size, its
// times beside those alone times the factors.
struct InterferenceRows {
  std::string op;
  bool crosses;
  double compute_factor, comm_factor;
};
proto::BenchFile interference_bench(const std::vector<InterferenceRows>& rows) {
  proto::BenchFile b;
  b.set_eppsim_bench(1);
  b.set_kind("interference");
  b.set_backend("cpu");
  b.set_device("test CPU (1 thread)");
  b.set_ranks(2);
  b.mutable_model()->set_name("tiny");
  int i = 0;
  for (const auto& [op, crosses, compute_factor, comm_factor] : rows) {
    for (std::uint64_t bytes : {1u << 16, 1u << 20, 1u << 24}) {
      auto* r = b.add_results();
      r->set_op(op);
      r->set_bytes(bytes);
      r->set_group_size(2);
      r->set_crosses_nodes(crosses);
      r->set_tokens(1024);
      r->set_correct(true);
      r->set_compute_alone_s(0.1 + 0.01 * (i++ % 3));
      r->set_compute_beside_s(r->compute_alone_s() * compute_factor);
      r->set_comm_alone_s(1e-9 * static_cast<double>(bytes));
      r->set_comm_beside_s(r->comm_alone_s() * comm_factor);
    }
  }
  return b;
}

TEST(Calibrate, InterferenceRowsGiveTheFactorsOfEachClassOfTraffic) {
  const proto::Calibration c = calibrate_one(interference_bench(
      {{"all-to-all", true, 1.05, 2.0}, {"send-recv", false, 1.2, 5.0}, {"all-reduce", false, 1.1, 3.0}}));
  ASSERT_EQ(c.interference_size(), 3);  // in the classes' order
  const std::pair<std::string, std::pair<double, double>> expected[] = {
      {"point-to-point", {1.2, 5.0}}, {"intra-node-collective", {1.1, 3.0}}, {"inter-node-collective", {1.05, 2.0}}};
  for (int i = 0; i < 3; ++i) {
    const auto& fit = c.interference(i);
    EXPECT_EQ(fit.traffic(), expected[i].first);
    EXPECT_NEAR(fit.compute_slowdown(), expected[i].second.first, 1e-9);
    EXPECT_NEAR(fit.comm_slowdown(), expected[i].second.second, 1e-9);
    EXPECT_EQ(fit.compute_quality().points(), 3u);
    EXPECT_LT(fit.compute_quality().max_relative_error(), 1e-9);
    EXPECT_LT(fit.comm_quality().max_relative_error(), 1e-9);
  }
  EXPECT_FALSE(c.has_forward());
  EXPECT_EQ(c.collectives_size(), 0);
  ASSERT_EQ(c.sources_size(), 1);
  EXPECT_EQ(c.sources(0).kind(), "interference");
  EXPECT_THAT(calibration_summary(c), HasSubstr("beside point-to-point         compute x1.200"));
}

// Per size, the factors of that size's rows; the rows' spread around them is
// below the one factor's when the slowdown depends on size.
TEST(Calibrate, InterferenceFactorsBySizeFollowTheSlowdownOfEachSize) {
  proto::BenchFile b = interference_bench({{"send-recv", false, 1.0, 1.0}});
  const double compute[] = {1.0, 1.1, 5.0}, comm[] = {160.0, 13.0, 1.6};  // at 64 KiB, 1 MiB, 16 MiB
  for (int i = 0; i < 3; ++i) {
    auto* r = b.mutable_results(i);
    r->set_compute_beside_s(compute[i] * r->compute_alone_s());
    r->set_comm_beside_s(comm[i] * r->comm_alone_s());
  }
  *b.add_results() = b.results(2);  // a second 16 MiB row, its compute 20% slower still
  b.mutable_results(3)->set_compute_beside_s(6.0 * b.results(3).compute_alone_s());
  const proto::Calibration c = calibrate_one(b);
  ASSERT_EQ(c.interference_size(), 1);
  const proto::InterferenceFit& fit = c.interference(0);
  ASSERT_EQ(fit.by_size_size(), 3);
  const std::uint64_t sizes[] = {1u << 16, 1u << 20, 1u << 24};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(fit.by_size(i).bytes(), sizes[i]);
    EXPECT_NEAR(fit.by_size(i).comm_slowdown(), comm[i], 1e-9);
    EXPECT_EQ(fit.by_size(i).rows(), i == 2 ? 2u : 1u);
  }
  EXPECT_NEAR(fit.by_size(0).compute_slowdown(), 1.0, 1e-9);
  // The two 16 MiB rows, 5 and 6: sum(1/r) / sum(1/r^2) = 5.4545...
  EXPECT_NEAR(fit.by_size(2).compute_slowdown(), (1 / 5.0 + 1 / 6.0) / (1 / 25.0 + 1 / 36.0), 1e-9);
  EXPECT_LT(fit.comm_by_size_quality().rms_relative_error(), 1e-9);
  EXPECT_GT(fit.compute_by_size_quality().rms_relative_error(), 0.01);
  EXPECT_LT(fit.compute_by_size_quality().rms_relative_error(), 0.1);
  EXPECT_GT(fit.compute_quality().rms_relative_error(), 0.5);  // one factor for all sizes
  EXPECT_THAT(calibration_summary(c), HasSubstr("by size: compute rms"));
}

TEST(Calibrate, InterferenceFactorsAreRelativeLeastSquaresAndNotClamped) {
  // Two rows of one class at factors 1 and 2: relative least squares of beside = f x alone
  // gives f = sum(1/r) / sum(1/r^2) = 1.5 / 1.25 = 1.2, 40% off the second row.
  proto::BenchFile b = interference_bench({{"all-reduce", false, 1.0, 0.5}});
  b.mutable_results()->RemoveLast();
  b.mutable_results(1)->set_compute_beside_s(2.0 * b.results(1).compute_alone_s());
  const proto::Calibration c = calibrate_one(b);
  ASSERT_EQ(c.interference_size(), 1);
  EXPECT_NEAR(c.interference(0).compute_slowdown(), 1.2, 1e-9);
  EXPECT_NEAR(c.interference(0).compute_quality().max_relative_error(), 0.4, 1e-9);
  EXPECT_NEAR(c.interference(0).comm_slowdown(), 0.5, 1e-9);  // a speed-up is recorded as measured

  b.mutable_results()->RemoveLast();
  EXPECT_THAT(error_of(b, "one.json"),
              HasSubstr("one.json: results (interference of intra-node-collective traffic, compute_beside_s): 1 points "
                        "cannot fit 1 coefficients"));
}

TEST(ReadBenchFile, InterferenceErrorsNameFileFieldAndRule) {
  const auto dir = fresh_dir("interference");
  const std::string head =
      R"("eppsim_bench": 1, "kind": "interference", "backend": "cpu", "device": "d", "ranks": 2, "model": {"name": "m"})";
  const std::string times = R"("compute_alone_s": 0.1, "compute_beside_s": 0.11, "comm_alone_s": 1e-4)";
  const auto error = [&](const std::string& name, const std::string& row, const std::string& file_head) {
    write_file_atomically(dir / name, fmt::format(R"({{{}, "results": [{{"op": "all-reduce", "bytes": 1024, "group_size": 2, {}}}]}})",
                                                  file_head, row));
    return read_error(dir / name);
  };
  const std::string good = R"("tokens": 64, "comm_beside_s": 2e-4, )" + times;
  EXPECT_EQ(error("good.json", good, head), "");
  EXPECT_THAT(error("beside.json", R"("tokens": 64, )" + times, head),
              HasSubstr((dir / "beside.json").string() + ": results[0].comm_beside_s: is missing"));
  EXPECT_THAT(error("zero.json", R"("tokens": 64, "comm_beside_s": 0, )" + times, head),
              HasSubstr("results[0].comm_beside_s: must be > 0 and at most 3600 s (one kernel or call timed), got 0"));
  EXPECT_THAT(error("tokens.json", R"("comm_beside_s": 2e-4, )" + times, head), HasSubstr("results[0].tokens: is missing"));
  EXPECT_THAT(error("kernel.json", R"("kernel": "layer", )" + good, head),
              HasSubstr("results[0].kernel: a comm or interference file holds op rows, not kernel rows"));
  EXPECT_THAT(error("wrong.json", R"("correct": false, )" + good, head), HasSubstr("results[0].correct: is false"));
  EXPECT_THAT(error("unknown.json", R"("compute_slow": 1, )" + good, head), HasSubstr("compute_slow"));
  EXPECT_THAT(error("nomodel.json", good, R"("eppsim_bench": 1, "kind": "interference", "backend": "cpu", "device": "d", "ranks": 2)"),
              HasSubstr("nomodel.json: model: is missing (compute and interference files name their model)"));
}

// calibrate -> a file -> a scenario naming it: the fits price compute and the
// collective they cover in the analytic engine's run.

}  // namespace
}  // namespace eppsim
