// How far a machine moved between two compute benchmarks (sim/bench_drift.h):
// rows matched by shape, the totals' ratio, the rows' extremes, and what is
// refused.
#include "sim/bench_drift.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

proto::BenchFile compute_bench() {
  proto::BenchFile b;
  b.set_eppsim_bench(1);
  b.set_kind("compute");
  b.set_backend("cpu");
  b.set_device("test CPU");
  b.set_ranks(1);
  b.mutable_model()->set_name("tiny");
  return b;
}

void add_layer(proto::BenchFile& b, const std::string& pass, std::uint64_t tokens, std::uint64_t context,
               double time_s) {
  auto* r = b.add_results();
  r->set_kernel("layer");
  r->set_pass(pass);
  r->set_tokens(tokens);
  r->set_context_tokens(context);
  r->set_segments(1);
  r->set_time_s(time_s);
}

void add_gemm(proto::BenchFile& b, const std::string& name, std::uint64_t m, double time_s) {
  auto* r = b.add_results();
  r->set_kernel("gemm");
  r->set_name(name);
  r->set_pass("forward");
  r->set_tokens(m);
  r->set_m(m);
  r->set_n(512);
  r->set_k(512);
  r->set_time_s(time_s);
}

TEST(ComputeDrift, ComparesTheRowsBothRunsHaveByTheirTotal) {
  proto::BenchFile before = compute_bench();
  add_layer(before, "forward", 512, 0, 0.10);
  add_layer(before, "forward", 1024, 0, 0.20);
  add_layer(before, "backward", 1024, 0, 0.40);
  add_layer(before, "forward", 1024, 1024, 0.30);  // not timed again
  add_gemm(before, "qkv", 1024, 0.05);
  proto::BenchFile after = compute_bench();
  add_layer(after, "forward", 1024, 0, 0.22);   // 10% slower
  add_layer(after, "backward", 1024, 0, 0.38);  // 5% faster
  add_gemm(after, "qkv", 1024, 0.06);           // 20% slower
  add_gemm(after, "ffn_up", 1024, 0.09);        // no such row before: left out
  const ComputeDrift drift = compute_drift(before, after, "before.json", "after.json");
  EXPECT_EQ(drift.rows, 3u);
  EXPECT_DOUBLE_EQ(drift.before_s, 0.65);
  EXPECT_DOUBLE_EQ(drift.after_s, 0.66);
  EXPECT_NEAR(drift.drift(), 0.66 / 0.65 - 1.0, 1e-12);
  EXPECT_NEAR(drift.least_row_ratio, 0.95, 1e-12);
  EXPECT_NEAR(drift.most_row_ratio, 1.2, 1e-12);
  EXPECT_EQ(largest_plain_layer_tokens(before, "before.json"), 1024u);
}

TEST(ComputeDrift, RefusesBenchmarksThatDoNotCompare) {
  proto::BenchFile before = compute_bench();
  add_layer(before, "forward", 512, 0, 0.10);
  proto::BenchFile other_model = before;
  other_model.mutable_model()->set_name("other");
  EXPECT_THAT([&] { compute_drift(before, other_model, "a.json", "b.json"); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("a.json and b.json: must be compute benchmarks of one")));
  proto::BenchFile disjoint = compute_bench();
  add_layer(disjoint, "forward", 2048, 0, 0.5);
  EXPECT_THAT([&] { compute_drift(before, disjoint, "a.json", "b.json"); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("b.json: results: no row is one of a.json's")));
  proto::BenchFile context_only = compute_bench();
  add_layer(context_only, "forward", 512, 512, 0.1);
  EXPECT_THAT([&] { largest_plain_layer_tokens(context_only, "c.json"); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("c.json: results: no layer row without context")));
}

TEST(ComputeDrift, WritesItsJson) {
  ComputeDrift drift;
  drift.rows = 2;
  drift.before_s = 1.0;
  drift.after_s = 1.25;
  drift.least_row_ratio = 1.0;
  drift.most_row_ratio = 1.5;
  const std::string json = compute_drift_json(drift);
  EXPECT_THAT(json, HasSubstr("\"drift\": 0.25"));
  EXPECT_THAT(json, HasSubstr("\"rows\": 2"));
  EXPECT_THAT(json, HasSubstr("\"most_row_ratio\": 1.5"));
}

}  // namespace
}  // namespace eppsim
