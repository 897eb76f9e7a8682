#include "sim/calibrate.h"

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/network/calibrated_network.h"
#include "base/errors.h"
#include "sim/run.h"
#include "base/proto_io.h"
#include "scenario/scenario.h"
#include "tests/sim/calibrate_fixture.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using testing::calibrate_one;
using testing::error_of;
using testing::fresh_dir;
using testing::read_error;

struct Truth {
  double alpha1, alpha2, beta;
  double time(double s, double c) const { return alpha1 * ((c + s) * (c + s) - c * c) + alpha2 * s + beta; }
};
constexpr Truth kForward{1e-12, 2e-7, 1e-4};
constexpr Truth kBackward{2.5e-12, 4e-7, 1.5e-4};

// A compute bench over s = 64 .. 32768 (powers of two), c in {0, s, 2s}, the
// times of `forward` and `backward` times (1 + noise), noise ~ N(0, sigma).
proto::BenchFile compute_bench(double sigma, Truth forward = kForward, Truth backward = kBackward,
                               std::uint32_t seed = 11) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  proto::BenchFile b;
  b.set_eppsim_bench(1);
  b.set_kind("compute");
  b.set_backend("cpu");
  b.set_device("test CPU (1 thread)");
  b.set_ranks(1);
  b.mutable_model()->set_name("tiny");
  b.mutable_model()->set_layers(2);
  for (const auto& [pass, truth] : {std::pair{"forward", forward}, std::pair{"backward", backward}}) {
    for (double s = 64; s <= 32768; s *= 2) {
      for (double c : {0.0, s, 2 * s}) {
        auto* r = b.add_results();
        r->set_kernel("layer");
        r->set_pass(pass);
        r->set_tokens(static_cast<std::uint64_t>(s));
        r->set_context_tokens(static_cast<std::uint64_t>(c));
        r->set_time_s(truth.time(s, c) * (1.0 + noise(rng)));
        r->set_repeats(5);
      }
    }
  }
  // A GEMM row: parsed and checked, not fitted.
  auto* g = b.add_results();
  g->set_kernel("gemm");
  g->set_name("qkv");
  g->set_pass("forward");
  g->set_m(64);
  g->set_n(64);
  g->set_k(64);
  g->set_time_s(1e-6);
  return b;
}

// A comm bench of `op` over `n` ranks, 1 KiB .. 64 MiB, time = latency + bus_bytes / busbw, times (1 + noise).
proto::BenchFile comm_bench(const std::string& op, std::uint32_t n, bool crosses, double latency_s, double busbw_Bps,
                            double sigma, std::uint32_t seed = 5) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  proto::BenchFile b;
  b.set_eppsim_bench(1);
  b.set_kind("comm");
  b.set_backend("cpu");
  b.set_device("test CPU");
  b.set_ranks(n);
  for (std::uint64_t bytes = 1024; bytes <= (64u << 20); bytes *= 4) {
    auto* r = b.add_results();
    r->set_op(op);
    r->set_bytes(bytes);
    r->set_group_size(n);
    r->set_crosses_nodes(crosses);
    const double t = latency_s + bus_bytes(*parse_comm_kind(op), n, static_cast<double>(bytes)) / busbw_Bps;
    r->set_time_s(t * (1.0 + noise(rng)));
    r->set_correct(true);
  }
  return b;
}

TEST(Calibrate, ExactComputeTimesGiveTheCoefficientsAndAPerfectFit) {
  const proto::Calibration c = calibrate_one(compute_bench(0.0));
  EXPECT_NEAR(c.forward().alpha1_s_per_token2() / kForward.alpha1, 1.0, 1e-6);
  EXPECT_NEAR(c.forward().alpha2_s_per_token() / kForward.alpha2, 1.0, 1e-6);
  EXPECT_NEAR(c.forward().beta_s() / kForward.beta, 1.0, 1e-6);
  EXPECT_NEAR(c.backward().alpha1_s_per_token2() / kBackward.alpha1, 1.0, 1e-6);
  EXPECT_NEAR(c.backward().alpha2_s_per_token() / kBackward.alpha2, 1.0, 1e-6);
  EXPECT_NEAR(c.backward().beta_s() / kBackward.beta, 1.0, 1e-6);
  EXPECT_EQ(c.forward_quality().points(), 30u);  // 10 sizes x 3 contexts
  EXPECT_NEAR(c.forward_quality().r_squared(), 1.0, 1e-12);
  EXPECT_LT(c.forward_quality().max_relative_error(), 1e-9);
  EXPECT_LT(c.backward_quality().rms_relative_error(), 1e-9);
  // Provenance.
  EXPECT_EQ(c.gpu(), "test CPU (1 thread)");
  EXPECT_EQ(c.model(), "tiny");
  ASSERT_EQ(c.sources_size(), 1);
  EXPECT_EQ(c.sources(0).file(), "bench.json");
  EXPECT_EQ(c.sources(0).kind(), "compute");
  EXPECT_EQ(c.sources(0).backend(), "cpu");
  EXPECT_EQ(c.collectives_size(), 0);
}

// The attention rows (one sequence, all heads) of `forward` and `backward`, and
// the LM head's GEMM rows at s = 64 .. 1024: forward `lm_head` of
// head_forward_s_per_token * s + 1e-5 s, backward `lm_head_dgrad` and
// `lm_head_wgrad` of half the backward time each.
void add_kernel_rows(proto::BenchFile& b, Truth forward, Truth backward, double head_forward_s_per_token,
                     double head_backward_s_per_token) {
  for (const auto& [pass, truth] : {std::pair{"forward", forward}, std::pair{"backward", backward}}) {
    for (double s = 64; s <= 1024; s *= 2) {
      for (double c : {0.0, s, 2 * s}) {
        auto* r = b.add_results();
        r->set_kernel("attention");
        r->set_pass(pass);
        r->set_tokens(static_cast<std::uint64_t>(s));
        r->set_context_tokens(static_cast<std::uint64_t>(c));
        r->set_time_s(truth.time(s, c));
      }
    }
  }
  for (double s = 64; s <= 1024; s *= 2) {
    const double backward_s = head_backward_s_per_token * s + 1e-5;
    for (auto [name, pass, time_s] : {std::tuple{"lm_head", "forward", head_forward_s_per_token * s + 1e-5},
                                      std::tuple{"lm_head_dgrad", "backward", backward_s / 2},
                                      std::tuple{"lm_head_wgrad", "backward", backward_s / 2}}) {
      auto* g = b.add_results();
      g->set_kernel("gemm");
      g->set_name(name);
      g->set_pass(pass);
      g->set_tokens(static_cast<std::uint64_t>(s));
      g->set_m(static_cast<std::uint64_t>(s));
      g->set_n(512);
      g->set_k(64);
      g->set_time_s(time_s);
    }
  }
}

TEST(Calibrate, AttentionAndLmHeadRowsGiveTheirOwnFits) {
  // Without them (the fixture has one qkv GEMM row): no kernel fits.
  const proto::Calibration plain = calibrate_one(compute_bench(0.0));
  EXPECT_FALSE(plain.has_forward_attention());
  EXPECT_FALSE(plain.has_backward_head());

  proto::BenchFile b = compute_bench(0.0);
  const Truth forward_attention{6e-13, 3e-8, 2e-5}, backward_attention{1.5e-12, 5e-8, 3e-5};
  add_kernel_rows(b, forward_attention, backward_attention, 3e-6, 7e-6);
  const proto::Calibration c = calibrate_one(b);
  ASSERT_TRUE(c.has_forward_attention());
  ASSERT_TRUE(c.has_backward_attention());
  EXPECT_NEAR(c.forward_attention().alpha1_s_per_token2() / forward_attention.alpha1, 1.0, 1e-6);
  EXPECT_NEAR(c.forward_attention().alpha2_s_per_token() / forward_attention.alpha2, 1.0, 1e-6);
  EXPECT_NEAR(c.backward_attention().alpha1_s_per_token2() / backward_attention.alpha1, 1.0, 1e-6);
  EXPECT_NEAR(c.backward_attention().beta_s() / backward_attention.beta, 1.0, 1e-6);
  EXPECT_EQ(c.forward_attention_quality().points(), 15u);  // 5 sizes x 3 contexts
  // The head: alpha2 * s + beta, backward the sum of its two GEMMs.
  ASSERT_TRUE(c.has_forward_head());
  ASSERT_TRUE(c.has_backward_head());
  EXPECT_NEAR(c.forward_head().alpha2_s_per_token() / 3e-6, 1.0, 1e-6);
  EXPECT_NEAR(c.backward_head().alpha2_s_per_token() / 7e-6, 1.0, 1e-6);
  EXPECT_NEAR(c.backward_head().beta_s() / 1e-5, 1.0, 1e-6);
  EXPECT_EQ(c.forward_head().alpha1_s_per_token2(), 0.0);
  EXPECT_EQ(c.backward_head_quality().points(), 5u);
  EXPECT_LT(c.backward_head_quality().max_relative_error(), 1e-9);
  // The layer fits are the same as without the kernel rows.
  EXPECT_DOUBLE_EQ(c.forward().alpha2_s_per_token(), plain.forward().alpha2_s_per_token());
  EXPECT_THAT(calibration_summary(c), HasSubstr("backward LM head alpha2 7e-06 s/token"));
  EXPECT_THAT(calibration_summary(c), HasSubstr("forward attention alpha1 6e-13 s/token^2"));
}

TEST(Calibrate, PackedRowsGiveTheCostOfEachSequencePastTheFirst) {
  // n sequences of s tokens: n times the alpha terms, beta once, gamma n - 1 times.
  constexpr double kGamma = 3e-5;
  proto::BenchFile b = compute_bench(0.0);
  for (const auto& [pass, truth] : {std::pair{"forward", kForward}, std::pair{"backward", kBackward}}) {
    for (double s : {64.0, 256.0, 1024.0}) {
      for (std::uint32_t n = 2; n <= 32; n *= 2) {
        auto* r = b.add_results();
        r->set_kernel("layer");
        r->set_pass(pass);
        r->set_tokens(static_cast<std::uint64_t>(s));
        r->set_context_tokens(0);
        r->set_segments(n);
        r->set_time_s(n * (truth.time(s, 0) - truth.beta) + truth.beta + (n - 1) * kGamma);
      }
    }
  }
  const proto::Calibration c = calibrate_one(b);
  for (const auto& [fit, truth] : {std::pair{&c.forward(), kForward}, std::pair{&c.backward(), kBackward}}) {
    EXPECT_NEAR(fit->gamma_s_per_extra_segment() / kGamma, 1.0, 1e-6);
    EXPECT_NEAR(fit->beta_s() / truth.beta, 1.0, 1e-6);
    EXPECT_NEAR(fit->alpha1_s_per_token2() / truth.alpha1, 1.0, 1e-6);
  }
  EXPECT_EQ(c.forward_quality().points(), 30u + 15u);
  // Without packed rows there is nothing to tell gamma from beta: it stays 0.
  EXPECT_EQ(calibrate_one(compute_bench(0.0)).forward().gamma_s_per_extra_segment(), 0.0);
  // A layer row packs at least one sequence.
  b.mutable_results(0)->set_segments(0);
  const std::filesystem::path bad = fresh_dir("bad") / "bench.json";
  write_file_atomically(bad, to_json(b));
  EXPECT_THAT(read_error(bad), HasSubstr("results[0].segments: must be >= 1, got 0"));
}

TEST(Calibrate, NoisyComputeTimesRecoverTheCoefficients) {
  const proto::Calibration c = calibrate_one(compute_bench(0.02));
  EXPECT_NEAR(c.forward().alpha1_s_per_token2() / kForward.alpha1, 1.0, 0.05);
  EXPECT_NEAR(c.forward().alpha2_s_per_token() / kForward.alpha2, 1.0, 0.05);
  EXPECT_NEAR(c.forward().beta_s() / kForward.beta, 1.0, 0.05);
  EXPECT_NEAR(c.backward().alpha1_s_per_token2() / kBackward.alpha1, 1.0, 0.05);
  EXPECT_NEAR(c.backward().alpha2_s_per_token() / kBackward.alpha2, 1.0, 0.05);
  EXPECT_NEAR(c.backward().beta_s() / kBackward.beta, 1.0, 0.05);
  // 2% noise: the fit explains almost all of the variance, and its relative
  // errors are of the noise's size.
  EXPECT_GT(c.forward_quality().r_squared(), 0.999);
  EXPECT_GT(c.forward_quality().rms_relative_error(), 0.01);
  EXPECT_LT(c.forward_quality().rms_relative_error(), 0.03);
  EXPECT_LT(c.forward_quality().max_relative_error(), 0.08);
}

TEST(Calibrate, CoefficientsStayNonNegative) {
  // No fixed cost: noise would push an unconstrained beta below zero half the time.
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    const proto::Calibration c =
        calibrate_one(compute_bench(0.02, Truth{1e-12, 2e-7, 0.0}, Truth{2e-12, 4e-7, 0.0}, seed));
    for (const auto* fit : {&c.forward(), &c.backward()}) {
      EXPECT_GE(fit->alpha1_s_per_token2(), 0.0);
      EXPECT_GE(fit->alpha2_s_per_token(), 0.0);
      EXPECT_GE(fit->beta_s(), 0.0);
    }
  }
  // Times that a negative intercept would fit exactly: the non-negative fit drops beta.
  FitProblem p;
  for (double s = 64; s <= 4096; s *= 2) {
    p.rows.push_back({s, 1.0});
    p.times_s.push_back(1e-7 * s - 2e-6);
  }
  const auto c = fit_non_negative(p, "test");
  EXPECT_EQ(c[1], 0.0);
  EXPECT_GT(c[0], 0.0);
}

TEST(Calibrate, FitQualityIsMeasuredOnTheUnweightedTimes) {
  // One coefficient 1 on x = 1, 2, 4 against times 1, 2, 5.
  FitProblem p;
  p.rows = {{1.0}, {2.0}, {4.0}};
  p.times_s = {1.0, 2.0, 5.0};
  const std::vector<double> c{1.0};
  const proto::FitQuality q = fit_quality(p, c);
  const double mean = 8.0 / 3.0;
  const double ss_tot = (1 - mean) * (1 - mean) + (2 - mean) * (2 - mean) + (5 - mean) * (5 - mean);
  EXPECT_EQ(q.points(), 3u);
  EXPECT_DOUBLE_EQ(q.r_squared(), 1.0 - 1.0 / ss_tot);
  EXPECT_DOUBLE_EQ(q.max_relative_error(), 0.2);
  EXPECT_DOUBLE_EQ(q.rms_relative_error(), std::sqrt(0.04 / 3.0));
}

TEST(Calibrate, CollectiveFitsRecoverLatencyAndBusBandwidth) {
  const std::vector<proto::BenchFile> files{comm_bench("all-gather", 4, false, 2e-5, 8e9, 0.01),
                                            comm_bench("send-recv", 2, true, 5e-6, 1.2e10, 0.01, 6)};
  const std::vector<std::string> names{"gather.json", "p2p.json"};
  const proto::Calibration c = calibrate(files, names);
  EXPECT_FALSE(c.has_forward());
  ASSERT_EQ(c.collectives_size(), 2);
  // Ordered by kind (send-recv first), then group size and node-crossing.
  const auto& p2p = c.collectives(0);
  EXPECT_EQ(p2p.kind(), "send-recv");
  EXPECT_EQ(p2p.group_size(), 2u);
  EXPECT_TRUE(p2p.crosses_nodes());
  EXPECT_NEAR(p2p.latency_s() / 5e-6, 1.0, 0.05);
  EXPECT_NEAR(p2p.bandwidth_bps() / 1.2e10, 1.0, 0.03);
  const auto& gather = c.collectives(1);
  EXPECT_EQ(gather.kind(), "all-gather");
  EXPECT_EQ(gather.group_size(), 4u);
  EXPECT_FALSE(gather.crosses_nodes());
  EXPECT_NEAR(gather.latency_s() / 2e-5, 1.0, 0.05);
  EXPECT_NEAR(gather.bandwidth_bps() / 8e9, 1.0, 0.03);
  EXPECT_EQ(gather.quality().points(), 9u);
  EXPECT_GT(gather.quality().r_squared(), 0.999);
  EXPECT_LT(gather.quality().max_relative_error(), 0.04);
  ASSERT_EQ(c.sources_size(), 2);
  EXPECT_EQ(c.sources(1).file(), "p2p.json");
  EXPECT_EQ(c.sources(1).kind(), "comm");
}

TEST(Calibrate, RowsOfSeveralFilesPool) {
  // The same collective measured in two files: one fit over both.
  const std::vector<proto::BenchFile> files{comm_bench("all-reduce", 2, false, 1e-5, 5e9, 0.0),
                                            comm_bench("all-reduce", 2, false, 1e-5, 5e9, 0.0)};
  const std::vector<std::string> names{"a.json", "b.json"};
  const proto::Calibration c = calibrate(files, names);
  ASSERT_EQ(c.collectives_size(), 1);
  EXPECT_EQ(c.collectives(0).quality().points(), 18u);
}

TEST(Calibrate, TooFewOrDegeneratePointsAreInputErrors) {
  proto::BenchFile few = compute_bench(0.0);
  // Keep three forward rows: 3 points cannot fit 3 coefficients and measure the fit.
  proto::BenchFile trimmed = few;
  trimmed.clear_results();
  int forward = 0;
  for (const auto& r : few.results()) {
    if (r.pass() == "forward" && ++forward > 3) continue;
    *trimmed.add_results() = r;
  }
  EXPECT_THAT(error_of(trimmed, "few.json"),
              HasSubstr("few.json: results (kernel \"layer\", pass \"forward\"): 3 points cannot fit 3 coefficients "
                        "and measure the fit; need at least 4"));
  // One size repeated: the points do not tell the terms apart.
  proto::BenchFile same = compute_bench(0.0);
  for (auto& r : *same.mutable_results()) {
    if (r.kernel() != "layer") continue;
    r.set_tokens(1024);
    r.set_context_tokens(0);
  }
  EXPECT_THAT(error_of(same), HasSubstr("bench.json: results (kernel \"layer\", pass \"forward\"): the points do not "
                                        "determine the 3 coefficients"));
  // No backward rows.
  const proto::BenchFile both = compute_bench(0.0);
  proto::BenchFile forward_only = both;
  forward_only.clear_results();
  for (const auto& r : both.results()) {
    if (r.pass() == "forward") *forward_only.add_results() = r;
  }
  EXPECT_THAT(error_of(forward_only), HasSubstr("no \"layer\" rows of pass \"backward\""));
  // Two message sizes of a collective.
  proto::BenchFile two = comm_bench("all-reduce", 2, false, 1e-5, 5e9, 0.0);
  while (two.results_size() > 2) two.mutable_results()->RemoveLast();
  EXPECT_THAT(error_of(two), HasSubstr("bench.json: results (op \"all-reduce\", group_size 2, crosses_nodes false): 2 "
                                       "points cannot fit 2 coefficients"));
  // Times that do not grow with the size fit no bandwidth.
  proto::BenchFile flat = comm_bench("all-reduce", 2, false, 1e-5, 5e9, 0.0);
  for (auto& r : *flat.mutable_results()) r.set_time_s(1e-3);
  EXPECT_THAT(error_of(flat), HasSubstr("the time does not grow with bytes"));
}

TEST(Calibrate, ComputeFilesMustShareModelAndDevice) {
  proto::BenchFile other = compute_bench(0.0);
  other.mutable_model()->set_layers(3);
  std::vector<proto::BenchFile> files{compute_bench(0.0), other};
  const std::vector<std::string> names{"a.json", "b.json"};
  EXPECT_THROW(
      {
        try {
          calibrate(files, names);
        } catch (const InputError& e) {
          EXPECT_THAT(e.what(), HasSubstr("b.json: model: differs from a.json's"));
          throw;
        }
      },
      InputError);
  files[1] = compute_bench(0.0);
  files[1].set_device("another CPU");
  EXPECT_THROW(calibrate(files, names), InputError);
}

// Malformed files, read from disk: each error names the file, the field and the rule.
TEST(ReadBenchFile, ErrorsNameFileFieldAndRule) {
  const auto dir = fresh_dir("bench");
  const auto write = [&](const std::string& name, const std::string& text) {
    write_file_atomically(dir / name, text);
    return dir / name;
  };
  const std::string head = R"("eppsim_bench": 1, "kind": "comm", "backend": "cpu", "device": "d", "ranks": 2)";
  const std::string row = R"("bytes": 1024, "group_size": 2, "time_s": 1e-5)";
  const auto good = write("good.json", fmt::format(R"({{{}, "results": [{{"op": "all-reduce", {}}}]}})", head, row));
  EXPECT_EQ(read_bench_file(good).results_size(), 1);

  const auto path = [&](const char* name) { return (dir / name).string(); };
  EXPECT_THAT(read_error(write("syntax.json", "{\"eppsim_bench\": 1,")), HasSubstr(path("syntax.json") + ": not a valid JSON"));
  EXPECT_THAT(read_error(write("key.json", fmt::format(R"({{{}, "resultz": []}})", head))),
              HasSubstr("resultz"));
  EXPECT_THAT(read_error(write("op.json", fmt::format(R"({{{}, "results": [{{"op": "allreduce", {}}}]}})", head, row))),
              HasSubstr(path("op.json") + ": results[0].op: unknown op \"allreduce\" (known: send-recv, all-reduce"));
  EXPECT_THAT(read_error(write("time.json",
                               fmt::format(R"({{{}, "results": [{{"op": "all-reduce", "bytes": 1024, "group_size": 2}}]}})", head))),
              HasSubstr(path("time.json") + ": results[0].time_s: is missing"));
  EXPECT_THAT(read_error(write("neg.json", fmt::format(R"({{{}, "results": [{{"op": "all-reduce", "bytes": 1024, "group_size": 2, "time_s": -1}}]}})", head))),
              HasSubstr("results[0].time_s: must be > 0 and at most 3600 s (one kernel or call timed), got -1"));
  // A time near the largest double passed as finite and made the fit's r^2 NaN.
  EXPECT_THAT(read_error(write("huge.json", fmt::format(R"({{{}, "results": [{{"op": "all-reduce", "bytes": 1024, "group_size": 2, "time_s": 1e308}}]}})", head))),
              HasSubstr("results[0].time_s: must be > 0 and at most 3600 s (one kernel or call timed), got 1e+308"));
  EXPECT_THAT(read_error(write("wrong.json", fmt::format(R"({{{}, "results": [{{"op": "all-reduce", {}, "correct": false}}]}})", head, row))),
              HasSubstr("results[0].correct: is false"));
  EXPECT_THAT(read_error(write("p2p.json", fmt::format(R"({{{}, "results": [{{"op": "send-recv", "bytes": 8, "group_size": 4, "time_s": 1}}]}})", head))),
              HasSubstr("results[0].group_size: must be 2 for send-recv, got 4"));
  EXPECT_THAT(read_error(write("version.json", R"({"eppsim_bench": 2})")),
              HasSubstr(path("version.json") + ": eppsim_bench: unknown format version 2 (known: 1)"));
  EXPECT_THAT(read_error(write("kind.json", R"({"eppsim_bench": 1, "kind": "gpu"})")),
              HasSubstr("kind: unknown kind \"gpu\" (known: compute, comm, interference)"));
  EXPECT_THAT(read_error(write("empty.json", fmt::format(R"({{{}, "results": []}})", head))), HasSubstr("results: is empty"));
  const std::string compute_head = R"("eppsim_bench": 1, "kind": "compute", "backend": "cuda", "device": "d", "ranks": 1)";
  EXPECT_THAT(read_error(write("nomodel.json", fmt::format(R"({{{}, "results": [{{"kernel": "layer"}}]}})", compute_head))),
              HasSubstr("model: is missing"));
  EXPECT_THAT(read_error(write("kernel.json", fmt::format(R"({{{}, "model": {{"name": "m"}}, "results": [{{"kernel": "conv", "pass": "forward", "time_s": 1}}]}})", compute_head))),
              HasSubstr("results[0].kernel: unknown kernel \"conv\" (known: layer, gemm, attention)"));
  EXPECT_THAT(read_error(write("pass.json", fmt::format(R"({{{}, "model": {{"name": "m"}}, "results": [{{"kernel": "layer", "pass": "sideways", "time_s": 1}}]}})", compute_head))),
              HasSubstr("results[0].pass: unknown pass \"sideways\""));
  EXPECT_THAT(read_error(write("ctx.json", fmt::format(R"({{{}, "model": {{"name": "m"}}, "results": [{{"kernel": "layer", "pass": "forward", "tokens": 8, "time_s": 1}}]}})", compute_head))),
              HasSubstr("results[0].context_tokens: is missing"));
  EXPECT_THAT(read_error(dir / "absent.json"), HasSubstr("absent.json"));
}

TEST(Calibrate, AScenarioNamingTheFileUsesItsFits) {
  const auto dir = fresh_dir("scenario");
  std::vector<proto::BenchFile> files{comm_bench("all-reduce", 4, false, 2e-5, 4e9, 0.0)};
  const std::vector<std::string> names{"comm.json"};
  write_message(calibrate(files, names), dir / "calibrations" / "test.textproto");
  write_file_atomically(dir / "bench.textproto", R"(
name: "calibrated all-reduce"
cluster {
  nodes: 1
  gpus_per_node: 4
  gpu { preset: "H100-SXM" }
  intra_node { bandwidth: "400GB/s" latency: "1us" }
  inter_node { bandwidth: "50GB/s" latency: "5us" }
}
workload { collective { kind: ALL_REDUCE bytes: "16MiB" } }
cost_model { calibration_file: "calibrations/test.textproto" }
)");
  const double fitted = 2e-5 + 1.5 * (16 << 20) / 4e9;
  // Both engines price the collective by the fit.
  for (const char* engine : {"analytic", "flow"}) {
    const RunResult result = run_scenario(load_scenario(dir / "bench.textproto", {fmt::format("simulation.engine={}", engine)}));
    EXPECT_EQ(result.trace.engine(), engine);
    EXPECT_NEAR(static_cast<double>(result.trace.step_time_ns()) * 1e-9, fitted, 1e-8) << engine;
  }
  // Without the file: the closed forms over the 400 GB/s links, much faster.
  write_file_atomically(dir / "plain.textproto",
                        read_file(dir / "bench.textproto").substr(0, read_file(dir / "bench.textproto").find("cost_model")));
  for (const char* engine : {"analytic", "flow"}) {
    const RunResult plain = run_scenario(load_scenario(dir / "plain.textproto", {fmt::format("simulation.engine={}", engine)}));
    EXPECT_LT(static_cast<double>(plain.trace.step_time_ns()) * 1e-9, fitted / 5) << engine;
  }
}

}  // namespace
}  // namespace eppsim
