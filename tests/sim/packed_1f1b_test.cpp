#include "sim/plan/packed_1f1b.h"

#include <algorithm>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "models/sequence_parallel_cost.h"
#include "sim/engine/analytic_engine.h"
#include "test_scenarios.h"
#include "schedule/program_ops.h"
#include "schedule/shared_compute.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

TEST(SplitLayers, EvenWithRemainderFirst) {
  EXPECT_EQ(split_layers(32, 4), (std::vector<std::uint32_t>{8, 8, 8, 8}));
  EXPECT_EQ(split_layers(30, 4), (std::vector<std::uint32_t>{8, 8, 7, 7}));
}

TEST(OneFOneBOrder, WarmupSteadyCooldown) {
  // Stage 0 of 4 with 6 micro-batches: 3 warm-up forwards, 3 pairs, 3 backwards.
  EXPECT_EQ(one_f_one_b_order(0, 4, 6), (std::vector<bool>{1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0}));
  // The last stage alternates from the start.
  EXPECT_EQ(one_f_one_b_order(3, 4, 3), (std::vector<bool>{1, 0, 1, 0, 1, 0}));
  // Fewer micro-batches than stages: all forwards, then all backwards.
  EXPECT_EQ(one_f_one_b_order(0, 4, 2), (std::vector<bool>{1, 1, 0, 0}));
}

int count_ops(const proto::RankProgram& program, proto::OpCode code) {
  const auto ops = ops_of(program);
  return static_cast<int>(std::count_if(ops.begin(), ops.end(), [&](const OpView op) { return op.code() == code; }));
}

TEST(Packed1F1B, ShapeOfTheSchedule) {
  // 8 GPUs, 2 stages x 4 replicas, 32 sequences of 2048 tokens in 4096-token micro-batches.
  const auto scenario = testing::fixed_length_scenario(1, 8, 2, 32, 2048, 4096);
  const auto schedule = make_planner("packed-1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>(32, 2048));
  EXPECT_EQ(schedule.num_ranks(), 8u);
  EXPECT_EQ(schedule.summary().pipeline_stages(), 2u);
  EXPECT_EQ(schedule.summary().data_parallel(), 4u);
  EXPECT_EQ(schedule.summary().micro_batches(), 4u);  // 8 sequences per replica, 2 per micro-batch
  EXPECT_EQ(schedule.summary().tokens(), 32u * 2048u);
  ASSERT_EQ(schedule.groups_size(), 2);
  EXPECT_THAT(schedule.groups(0).ranks(), ::testing::ElementsAre(0, 1, 2, 3));
  // Stage 0 (rank 0): 4 forwards + 4 backwards + optimizer; sends activations, receives gradients.
  const auto& first = schedule.programs(0);
  EXPECT_EQ(count_ops(first, proto::OP_COMPUTE), 9);
  EXPECT_EQ(count_ops(first, proto::OP_SEND), 4);
  EXPECT_EQ(count_ops(first, proto::OP_RECV), 4);
  EXPECT_EQ(count_ops(first, proto::OP_COLLECTIVE), 2);  // gradient all-reduce + weight all-gather (ZeRO-1)
  // Every send has a matching receive with the same size and tag.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::uint64_t> sends, recvs;
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    for (const OpView op : ops_of(schedule, r)) {
      if (op.is_send()) sends[{r, op.peer(), op.tag()}] = op.size_bytes();
      if (op.is_recv()) recvs[{op.peer(), r, op.tag()}] = op.size_bytes();
    }
  }
  EXPECT_EQ(sends, recvs);
  // Activations crossing the stage boundary: tokens x hidden x 2 bytes.
  EXPECT_EQ(sends.begin()->second, 4096u * 4096u * 2u);
}

TEST(Packed1F1B, ModelFlopsCountForwardAndBackwardOnce) {
  const auto scenario = testing::fixed_length_scenario(1, 4, 4, 4, 1024, 1024);
  const auto plain = make_planner("packed-1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>(4, 1024));
  const auto recompute = testing::fixed_length_scenario(1, 4, 4, 4, 1024, 1024, "full_recompute: true");
  const auto with_recompute = make_planner("packed-1f1b", recompute)->plan(recompute, std::vector<std::uint64_t>(4, 1024));
  EXPECT_GT(plain.summary().model_flops(), 0.0);
  EXPECT_DOUBLE_EQ(plain.summary().model_flops(), with_recompute.summary().model_flops());
  // Recompute keeps fewer activations.
  EXPECT_LT(with_recompute.summary().planned_peak_memory_bytes(0), plain.summary().planned_peak_memory_bytes(0));
}

TEST(Packed1F1B, FailsClearlyWhenTheBatchDoesNotFit) {
  // A 7B model on one GPU: 16 bytes per parameter alone exceed 80 GB.
  const auto scenario = testing::fixed_length_scenario(1, 1, 1, 1, 1024, 1024);
  try {
    make_planner("packed-1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>{1024});
    FAIL() << "expected an out-of-memory plan error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 0 (pipeline stage 0) needs"));
    EXPECT_THAT(e.what(), HasSubstr("memory limit"));
  }
}

TEST(Packed1F1B, LongSequenceGetsItsOwnMicroBatch) {
  const auto scenario = testing::fixed_length_scenario(1, 4, 4, 3, 1024, 2048);
  const auto schedule = make_planner("packed-1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>{6000, 1000, 1000});
  EXPECT_EQ(schedule.summary().micro_batches(), 2u);
}

TEST(Packed1F1B, RejectsZero3) {
  const auto base = testing::fixed_length_scenario(1, 4, 4, 4, 1024, 1024);
  auto proto = base.proto;
  proto.mutable_plan()->set_zero_stage(3);
  const auto scenario = resolve_scenario(proto, "test.textproto", ".");
  EXPECT_THROW(make_planner("packed-1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>(4, 1024)), InputError);
}

proto::Trace run_with_cost_model(const ResolvedScenario& scenario, const proto::Schedule& schedule) {
  return testing::simulate(scenario, schedule);
}

TEST(Packed1F1B, TensorAndContextParallelShardTheWork) {
  // 2 nodes x 8, 2 stages, with tp x cp ranks per replica, against the plain plan on
  // 2 nodes x 8/(tp*cp) GPUs: the same replicas and micro-batches, on 1/(tp*cp) of the ranks.
  const std::vector<std::uint64_t> batch(16, 4096);
  auto peak_of = [](const proto::Schedule& schedule) {
    const auto& peaks = schedule.summary().planned_peak_memory_bytes();
    return *std::max_element(peaks.begin(), peaks.end());
  };
  for (const auto& [tp, cp] : {std::pair{2u, 1u}, std::pair{1u, 2u}, std::pair{2u, 2u}}) {
    const auto base = testing::fixed_length_scenario(2, 8 / (tp * cp), 2, 16, 4096, 8192);
    const auto plain = make_planner("packed-1f1b", base)->plan(base, batch);
    const auto scenario = testing::fixed_length_scenario(
        2, 8, 2, 16, 4096, 8192, fmt::format("tensor_parallel: {} context_parallel: {}", tp, cp));
    const auto schedule = make_planner("packed-1f1b", scenario)->plan(scenario, batch);
    EXPECT_EQ(schedule.summary().data_parallel(), plain.summary().data_parallel());
    EXPECT_EQ(schedule.num_ranks(), 16u);
    EXPECT_LT(peak_of(schedule), peak_of(plain)) << tp << "x" << cp;
    EXPECT_NEAR(schedule.summary().model_flops(), plain.summary().model_flops(), 1e-6 * plain.summary().model_flops());
    int tp_ops = 0;
    for (const OpView op : ops_of(schedule, 0)) {
      if (op.is_compute() && compute_of(schedule, op).phase() == proto::FORWARD) {
        EXPECT_EQ(compute_of(schedule, op).shards(), tp * cp);
      }
      if (op.is_collective() && op.collective_kind() == proto::ALL_REDUCE &&
          schedule.groups(static_cast<int>(op.group())).ranks_size() == static_cast<int>(tp)) {
        ++tp_ops;
      }
      if (op.is_send() && schedule.stream_names(static_cast<int>(op.stream())) == "send_next") {
        EXPECT_EQ(op.size_bytes(), 8192ull * 4096 * 2 / (tp * cp));
      }
    }
    if (tp > 1) {
      EXPECT_GT(tp_ops, 0);
    }
    const auto trace = run_with_cost_model(scenario, schedule);
    EXPECT_GT(trace.step_time_ns(), 0);
    // Sharded compute: faster than the same replicas on fewer GPUs.
    EXPECT_LT(trace.step_time_ns(), run_with_cost_model(base, plain).step_time_ns()) << tp << "x" << cp;
  }
}

// Ring attention over a CP group of 2 on one node: per layer and pass, one ring
// step of K/V (K/V and dK/dV backward) beside the attention; the step matches
// the peer's, and each layer exposes max(0, ring time - attention time).
void check_ring(const std::string& intra_bandwidth) {
  const auto sc = testing::test_scenario(1, 2, R"(
    name: "cp" seed: 7 model { preset: "llama2-7b" }
    workload { lengths { fixed: 8192 } global_batch: 1 max_length: 8192 }
    plan { strategy: "packed-1f1b" zero_stage: 1
           packed_1f1b { pipeline_stages: 1 micro_batch_tokens: 8192 context_parallel: 2 } })",
                                         "test.textproto", intra_bandwidth);
  const auto schedule = make_planner("packed-1f1b", sc)->plan(sc, std::vector<std::uint64_t>{8192});
  const std::uint32_t layers = sc.model.layers;
  const std::vector<Segment> segments{{8192, 0}};
  for (std::uint32_t r = 0; r < 2; ++r) {
    std::map<proto::Phase, int> sends, recvs, attention;
    for (const OpView op : ops_of(schedule, r)) {
      const auto& stream = schedule.stream_names(static_cast<int>(op.stream()));
      if (op.is_send()) {
        EXPECT_EQ(stream, "cp_ring_send");
        EXPECT_EQ(op.peer(), 1 - r);
      }
      if (op.is_recv()) {
        EXPECT_EQ(stream, "cp_ring_recv");
        EXPECT_EQ(op.peer(), 1 - r);
      }
      if (op.is_compute() && compute_of(schedule, op).phase() != proto::OPTIMIZER) {
        const auto& c = compute_of(schedule, op);
        EXPECT_EQ(c.shards(), 2u);
        ASSERT_EQ(c.splits_size(), 1);
        EXPECT_EQ(c.splits(0).kind(), proto::CONTEXT_PARALLEL);
        EXPECT_EQ(schedule.groups(static_cast<int>(c.splits(0).group())).ranks_size(), 2);
        EXPECT_EQ(c.layer_count(), 1u);
        attention[c.phase()] += c.layer_part() == proto::ATTENTION;
      }
    }
    EXPECT_EQ(attention[proto::FORWARD], static_cast<int>(layers));
    EXPECT_EQ(attention[proto::BACKWARD], static_cast<int>(layers));
    EXPECT_EQ(count_ops(schedule.programs(static_cast<int>(r)), proto::OP_SEND), static_cast<int>(2 * layers));
    EXPECT_EQ(count_ops(schedule.programs(static_cast<int>(r)), proto::OP_RECV), static_cast<int>(2 * layers));
  }
  // Sizes: K+V of the local half forward, with dK/dV backward.
  const Bytes forward = ring_attention_step_bytes(sc.model, segments, 2, Pass::Forward);
  const Bytes backward = ring_attention_step_bytes(sc.model, segments, 2, Pass::Backward);
  EXPECT_EQ(forward, Bytes(4096ull * 2 * 4096 * 2));
  EXPECT_EQ(backward.count, 2 * forward.count);

  const auto trace = run_with_cost_model(sc, schedule);
  // Per layer on rank 0: the part after attention starts max(attention, ring) after
  // attention started.
  std::map<std::uint32_t, OpEventRef> events;
  for (const OpEventRef e : events_of(trace)) {
    if (e.rank() == 0) events.insert_or_assign(e.op(), e);
  }
  const auto ops = ops_of(schedule, 0);
  int layers_checked = 0;
  double exposed_total = 0.0;
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].is_compute() || compute_of(schedule, ops[i]).layer_part() != proto::ATTENTION) continue;
    std::uint32_t after = i + 1;
    while (!ops[after].is_compute()) ++after;
    const OpEventRef attn = events.at(i);
    const OpEventRef next = events.at(after);
    const Bytes step = compute_of(schedule, ops[i]).phase() == proto::BACKWARD ? backward : forward;
    const double ring_s = sc.cost.model->p2p_time(0, 1, step).value;
    const double attention_s = static_cast<double>(attn.end_ns() - attn.start_ns()) * 1e-9;
    const double exposed_s = static_cast<double>(next.start_ns() - attn.end_ns()) * 1e-9;
    EXPECT_NEAR(exposed_s, std::max(0.0, ring_s - attention_s), 2e-9) << "op " << i;
    exposed_total += exposed_s;
    ++layers_checked;
  }
  EXPECT_EQ(layers_checked, static_cast<int>(2 * layers));
  if (intra_bandwidth == "1GB/s") {
    EXPECT_GT(exposed_total, 0.0);
  } else {
    EXPECT_EQ(exposed_total, 0.0);
  }
}

TEST(Packed1F1B, ContextParallelRingOverlapsAttention) { check_ring("300GB/s"); }
TEST(Packed1F1B, ContextParallelRingExposesWhatAttentionCannotHide) { check_ring("1GB/s"); }

TEST(Packed1F1B, DefaultTensorAndContextParallelChangeNothing) {
  const auto base = testing::fixed_length_scenario(1, 8, 2, 16, 2048, 4096);
  const auto ones = testing::fixed_length_scenario(1, 8, 2, 16, 2048, 4096, "tensor_parallel: 1 context_parallel: 1");
  const std::vector<std::uint64_t> batch(16, 2048);
  EXPECT_EQ(make_planner("packed-1f1b", base)->plan(base, batch).SerializeAsString(), make_planner("packed-1f1b", ones)->plan(ones, batch).SerializeAsString());
}

TEST(Packed1F1B, TensorParallelRules) {
  const auto planner_of = [](const std::string& extra) {
    return make_planner("packed-1f1b", testing::fixed_length_scenario(2, 4, 2, 4, 1024, 1024, extra));
  };
  EXPECT_THROW(planner_of("tensor_parallel: 8"), InputError);
  EXPECT_THROW(planner_of("tensor_parallel: 3"), InputError);
  EXPECT_THROW(planner_of("tensor_parallel: 4 context_parallel: 2 "), InputError);
  EXPECT_NO_THROW(planner_of("tensor_parallel: 4"));
}

// Errors in plan.packed_1f1b name the file, the line, the field, the rule and
// the --set that caused them.
TEST(Packed1F1B, OptionErrorsAreLocated) {
  const std::string text = testing::test_scenario_text(2, 8, R"(name: "t"
    model { preset: "llama2-7b" }
    workload { lengths { fixed: 4096 } global_batch: 32 max_length: 8192 }
    plan {
      zero_stage: 1
      packed_1f1b { pipeline_stages: 5 micro_batch_tokens: 8192 }
    })");
  EXPECT_EQ(testing::planner_error(text), "s.textproto:7: plan.packed_1f1b.pipeline_stages: must divide the cluster's 16 "
                                          "GPUs (cluster.nodes 2 x cluster.gpus_per_node 8), got 5");
  EXPECT_EQ(testing::planner_error(text, {"plan.packed_1f1b.pipeline_stages=3"}),
            "s.textproto: plan.packed_1f1b.pipeline_stages: must divide the cluster's 16 GPUs (cluster.nodes 2 x "
            "cluster.gpus_per_node 8), got 3 (set by --set plan.packed_1f1b.pipeline_stages=3)");
  EXPECT_EQ(testing::planner_error(text, {"plan.packed_1f1b.pipeline_stages=4"}), "");
  EXPECT_EQ(testing::planner_error(text, {"cluster.nodes=8", "plan.packed_1f1b.pipeline_stages=64"}),
            "s.textproto: plan.packed_1f1b.pipeline_stages: must be <= the model's 32 layers, got 64 (set by --set "
            "plan.packed_1f1b.pipeline_stages=64)");
  EXPECT_EQ(testing::planner_error(text, {"plan.packed_1f1b={pipeline_stages: 4}"}),
            "s.textproto: plan.packed_1f1b.micro_batch_tokens: must be > 0, got 0 (set by --set "
            "plan.packed_1f1b={pipeline_stages: 4})");
  EXPECT_EQ(testing::planner_error(text, {"plan.packed_1f1b.pipeline_stages=4", "plan.zero_stage=3"}),
            "s.textproto: plan.zero_stage: packed-1f1b supports ZeRO stages 0 to 2 (Megatron's distributed optimizer), "
            "got 3 (set by --set plan.zero_stage=3)");
  EXPECT_EQ(testing::planner_error(text, {"plan.packed_1f1b.pipeline_stages=4", "plan.packed_1f1b.tensor_parallel=3"}),
            "s.textproto: plan.packed_1f1b.tensor_parallel: must divide the model's 32 attention heads, got 3 (set by "
            "--set plan.packed_1f1b.tensor_parallel=3)");
}

}  // namespace
}  // namespace eppsim
