// The CPU backend: attention kernels against a naive reference, the causal
// mask, backward against finite differences; CpuKernels; the CPU ComputeQueue.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <vector>

#include "runtime/cpu/cpu_attention.h"
#include "runtime/cpu/cpu_compute_queue.h"
#include "runtime/cpu/cpu_kernels.h"
#include "tests/runtime/attention_reference.h"

namespace eppsim::runtime {
namespace {

double loss(const AttentionShape& a, const Inputs& in) {
  const std::vector<double> o = naive_forward(a, in.q, in.k, in.v);
  double l = 0.0;
  for (std::size_t i = 0; i < o.size(); ++i) l += o[i] * in.d_o[i];
  return l;
}

// Central differences of loss() in every element of `which`.
std::vector<double> finite_differences(const AttentionShape& a, Inputs in, std::vector<double> Inputs::*which) {
  std::vector<double> grad((in.*which).size());
  const double eps = 1e-5;
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const double x = (in.*which)[i];
    (in.*which)[i] = x + eps;
    const double up = loss(a, in);
    (in.*which)[i] = x - eps;
    const double down = loss(a, in);
    (in.*which)[i] = x;
    grad[i] = (up - down) / (2 * eps);
  }
  return grad;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tolerance, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0.0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  ASSERT_GT(scale, 0.0) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * scale) << what << " element " << i;
}

struct KernelOutputs {
  std::vector<float> o, dq, dk, dv;
};

KernelOutputs run_kernels(const AttentionShape& a, const Inputs& in) {
  const auto q = to_float(in.q), k = to_float(in.k), v = to_float(in.v), d_o = to_float(in.d_o);
  KernelOutputs out{std::vector<float>(q.size()), std::vector<float>(q.size()), std::vector<float>(k.size(), 9.0f),
                    std::vector<float>(k.size(), 9.0f)};  // dK, dV start dirty: the kernel must zero them
  AttentionScratch scratch;
  attention_forward(a, q.data(), k.data(), v.data(), out.o.data(), scratch);
  attention_backward(a, q.data(), k.data(), v.data(), d_o.data(), out.dq.data(), out.dk.data(), out.dv.data(), scratch);
  return out;
}

// Small enough for finite differences: 5 queries over 3 context tokens, grouped heads.
constexpr AttentionShape kTiny{.tokens = 5, .context_tokens = 3, .heads = 4, .kv_heads = 2, .head_dim = 8};
// Several query blocks of kAttentionBlockRows, the last one partial.
constexpr AttentionShape kBlocked{.tokens = 150, .context_tokens = 20, .heads = 2, .kv_heads = 1, .head_dim = 16};

TEST(CpuAttention, ForwardMatchesTheDefinition) {
  for (const AttentionShape& a : {kTiny, kBlocked, AttentionShape{.tokens = 70, .heads = 3, .kv_heads = 3, .head_dim = 4}}) {
    const Inputs in = inputs_for(a);
    expect_close(run_kernels(a, in).o, naive_forward(a, in.q, in.k, in.v), 1e-5, "O");
  }
}

TEST(CpuAttention, ReferenceBackwardMatchesFiniteDifferences) {
  const Inputs in = inputs_for(kTiny);
  const Grads g = naive_backward(kTiny, in);
  expect_close(to_float(g.dq), finite_differences(kTiny, in, &Inputs::q), 1e-5, "dQ");
  expect_close(to_float(g.dk), finite_differences(kTiny, in, &Inputs::k), 1e-5, "dK");
  expect_close(to_float(g.dv), finite_differences(kTiny, in, &Inputs::v), 1e-5, "dV");
}

TEST(CpuAttention, BackwardMatchesTheReference) {
  for (const AttentionShape& a : {kTiny, kBlocked}) {
    const Inputs in = inputs_for(a);
    const KernelOutputs out = run_kernels(a, in);
    const Grads g = naive_backward(a, in);
    expect_close(out.dq, g.dq, 1e-4, "dQ");
    expect_close(out.dk, g.dk, 1e-4, "dK");
    expect_close(out.dv, g.dv, 1e-4, "dV");
  }
}

TEST(CpuAttention, NoQuerySeesALaterKey) {
  const AttentionShape a = kBlocked;
  Inputs in = inputs_for(a);
  const KernelOutputs before = run_kernels(a, in);
  // Change the last key and value: only the last query may see them.
  const std::uint64_t last = (a.context_tokens + a.tokens - 1) * a.kv_heads * a.head_dim;
  for (std::uint64_t x = last; x < in.k.size(); ++x) {
    in.k[x] += 1.0;
    in.v[x] -= 1.0;
  }
  const KernelOutputs after = run_kernels(a, in);
  const std::uint64_t row = std::uint64_t{a.heads} * a.head_dim;
  for (std::uint64_t i = 0; i + row < before.o.size(); ++i) ASSERT_EQ(before.o[i], after.o[i]) << "element " << i;
  bool last_row_changed = false;
  for (std::uint64_t i = before.o.size() - row; i < before.o.size(); ++i) last_row_changed |= before.o[i] != after.o[i];
  EXPECT_TRUE(last_row_changed);
}

TEST(CpuAttention, RejectsHeadsTheKvHeadsDoNotDivide) {
  const AttentionShape a{.tokens = 4, .heads = 3, .kv_heads = 2, .head_dim = 4};
  std::vector<float> buffer(64);
  AttentionScratch scratch;
  EXPECT_THROW(attention_forward(a, buffer.data(), buffer.data(), buffer.data(), buffer.data(), scratch),
               std::invalid_argument);
}

TEST(CpuKernels, PatternIsFixedAndBounded) {
  std::vector<float> a(1000), b(1000);
  fill_deterministic(a.data(), 0, 1000);
  fill_deterministic(b.data(), 0, 500);
  fill_deterministic(b.data(), 500, 1000);
  EXPECT_EQ(a, b);
  for (float x : a) {
    EXPECT_GE(x, -0.25f);
    EXPECT_LT(x, 0.25f);
  }
  EXPECT_GT(std::set<float>(a.begin(), a.end()).size(), 500u);
}

KernelPlan small_plan(Pass pass, std::uint64_t tokens) {
  KernelPlan plan;
  plan.pass = pass;
  plan.gemms.push_back(GemmShape{.m = tokens, .n = 96, .k = 64, .count = 2, .name = "qkv"});
  plan.attention.push_back(
      AttentionShape{.tokens = tokens, .context_tokens = tokens / 2, .heads = 2, .kv_heads = 1, .head_dim = 32});
  plan.elementwise_bytes = 1 << 16;
  return plan;
}

TEST(CpuKernels, RunsEveryKindOfWork) {
  CpuKernels kernels(1 << 12);  // a small stream buffer: several passes
  kernels.run(small_plan(Pass::Forward, 80));
  kernels.run(small_plan(Pass::Backward, 80));
  kernels.run(small_plan(Pass::Recompute, 40));
  kernels.run(KernelPlan{});
}

TEST(CpuComputeQueue, CompletesInSubmissionOrder) {
  StepClock clock;
  const auto queue = make_cpu_compute_queue(clock);
  EXPECT_EQ(queue->in_flight(), 0u);
  const std::vector<std::uint64_t> tokens = {200, 10, 120, 1, 64};
  for (std::size_t i = 0; i < tokens.size(); ++i)
    queue->submit(static_cast<ActivityId>(10 + i), static_cast<std::uint32_t>(i % 2),
                  small_plan(i % 2 ? Pass::Backward : Pass::Forward, tokens[i]));
  EXPECT_EQ(queue->in_flight(), tokens.size());
  std::vector<Completion> done;
  while (done.size() < tokens.size()) {
    queue->wait(-1.0);
    for (const Completion& c : queue->poll()) done.push_back(c);
  }
  EXPECT_EQ(queue->in_flight(), 0u);
  for (std::size_t i = 0; i < done.size(); ++i) {
    EXPECT_EQ(done[i].id, 10 + i);
    EXPECT_GT(done[i].end_s, 0.0);
    if (i > 0) {
      EXPECT_GE(done[i].end_s, done[i - 1].end_s);
    }
  }
  EXPECT_LE(done.back().end_s, clock.now_s());
  EXPECT_TRUE(queue->poll().empty());
}

TEST(CpuComputeQueue, WaitReturnsAfterItsTimeout) {
  StepClock clock;
  const auto queue = make_cpu_compute_queue(clock);
  const auto start = std::chrono::steady_clock::now();
  queue->wait(0.02);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.019);
  EXPECT_LT(waited, 1.0);
  EXPECT_TRUE(queue->poll().empty());
  queue->wait(-1.0);  // nothing in flight: returns rather than waiting forever
}

TEST(CpuComputeQueue, KernelErrorsReachTheCaller) {
  StepClock clock;
  const auto queue = make_cpu_compute_queue(clock);
  KernelPlan bad;
  bad.attention.push_back(AttentionShape{.tokens = 4, .heads = 3, .kv_heads = 2, .head_dim = 4});
  queue->submit(1, 0, bad);
  EXPECT_THROW(
      {
        while (true) {
          queue->wait(-1.0);
          queue->poll();
        }
      },
      std::invalid_argument);
}

TEST(CpuComputeQueue, RejectsZeroThreads) {
  StepClock clock;
  EXPECT_THROW(make_cpu_compute_queue(clock, CpuComputeOptions{.blas_threads = 0}), std::invalid_argument);
}

}  // namespace
}  // namespace eppsim::runtime
