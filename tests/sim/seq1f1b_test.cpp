#include "sim/plan/seq1f1b.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/compute_cost.h"
#include "base/errors.h"
#include "sim/engine/analytic_engine.h"
#include "sim/plan/planner.h"
#include "test_scenarios.h"
#include "schedule/compute_segments.h"
#include "schedule/program_ops.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

// `nodes` x `gpus_per_node` A100-80GB, llama2-7b, strategy seq1f1b with `options`.
ResolvedScenario seq_scenario(std::uint32_t nodes, std::uint32_t gpus_per_node, std::uint64_t max_length,
                              const std::string& options = "") {
  return testing::test_scenario(nodes, gpus_per_node, fmt::format(R"(
    name: "test"
    seed: 7
    model {{ preset: "llama2-7b" }}
    workload {{ lengths {{ fixed: 1024 }} global_batch: 8 max_length: {} }}
    plan {{ strategy: "seq1f1b" zero_stage: 1 seq1f1b {{ {} }} }}
  )",
                                                                  max_length, options));
}

double forward_flops(const TransformerSpec& model, Segment segment) {
  const std::array<Segment, 1> one{segment};
  return chunk_flops(model, Pass::Forward, ChunkWork{one, model.layers, false, false}).total();
}

TEST(Seq1F1BSlices, EqualFlopsAndGrowingContext) {
  const auto scenario = seq_scenario(2, 4, 32768);
  for (std::uint64_t length : {32768ull, 10001ull, 4096ull}) {
    const auto parts = balanced_slice_lengths(scenario.model, length, 4);
    ASSERT_EQ(parts.size(), 4u);
    std::uint64_t context = 0;
    std::vector<double> flops;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      EXPECT_GT(parts[i], 0u);
      if (i > 0) {
        EXPECT_LE(parts[i], parts[i - 1]) << "later slices attend to more context";
      }
      flops.push_back(forward_flops(scenario.model, Segment{parts[i], context}));
      context += parts[i];
    }
    EXPECT_EQ(context, length);
    const auto [lo, hi] = std::minmax_element(flops.begin(), flops.end());
    EXPECT_LT((*hi - *lo) / *hi, 0.01) << length;
  }
  EXPECT_EQ(balanced_slice_lengths(scenario.model, 3, 4), (std::vector<std::uint64_t>{1, 1, 1}));
}

TEST(PartiallyOrderedQueue, FifoAcrossSequencesLifoWithin) {
  PartiallyOrderedQueue q;
  q.push(0, 7, false);
  q.push(1, 7, false);
  EXPECT_FALSE(q.ready());
  q.push(2, 7, true);
  q.push(3, 8, true);
  q.push(4, 9, false);
  EXPECT_EQ(q.pop(), 2u);
  EXPECT_EQ(q.pop(), 1u);
  EXPECT_EQ(q.pop(), 0u);
  EXPECT_EQ(q.pop(), 3u);
  EXPECT_FALSE(q.ready());
  EXPECT_THROW(q.pop(), std::logic_error);
}

TEST(Seq1F1BOrder, BackwardsReversedWithinASequence) {
  // A 3-slice sequence, a packed chunk, a 2-slice sequence.
  std::vector<Seq1F1BChunk> chunks{{{{100, 0}}, 0, false},  {{{80, 100}}, 0, false}, {{{70, 180}}, 0, true},
                                   {{{50, 0}, {20, 0}}, 1, true}, {{{60, 0}}, 2, false}, {{{40, 60}}, 2, true}};
  for (std::uint32_t stages : {1u, 2u, 4u}) {
    for (std::uint32_t s = 0; s < stages; ++s) {
      const auto order = seq1f1b_order(s, stages, chunks);
      ASSERT_EQ(order.size(), 12u);
      std::vector<std::uint32_t> forwards, backwards;
      for (const auto& [f, j] : order) {
        if (f) {
          forwards.push_back(j);
        } else {
          EXPECT_TRUE(std::find(forwards.begin(), forwards.end(), j) != forwards.end()) << "backward before forward";
          backwards.push_back(j);
        }
      }
      EXPECT_EQ(forwards, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
      EXPECT_EQ(backwards, (std::vector<std::uint32_t>{2, 1, 0, 3, 5, 4}));
    }
  }
  // Later stages never run more forwards before a backward than earlier ones.
  const auto last = seq1f1b_order(3, 4, chunks);
  EXPECT_EQ(last.front(), std::make_pair(true, 0u));
  EXPECT_EQ(last[3], std::make_pair(false, 2u));  // the whole first sequence, then its last slice back
}

TEST(Seq1F1BOrder, WarmUpCountsWholeSequences) {
  // Three 2-slice sequences on 2 stages: stage 0 forwards all of the next sequence
  // before the first backward, so stage 1 never waits for a slice while stage 0
  // runs backwards.
  std::vector<Seq1F1BChunk> chunks;
  for (std::uint32_t q = 0; q < 3; ++q) {
    chunks.push_back({{{100, 0}}, q, false});
    chunks.push_back({{{80, 100}}, q, true});
  }
  const auto first = seq1f1b_order(0, 2, chunks);
  const std::vector<std::pair<bool, std::uint32_t>> expected_first{
      {true, 0}, {true, 1}, {true, 2}, {true, 3}, {false, 1}, {false, 0},
      {true, 4}, {true, 5}, {false, 3}, {false, 2}, {false, 5}, {false, 4}};
  EXPECT_EQ(first, expected_first);
  const auto last = seq1f1b_order(1, 2, chunks);
  const std::vector<std::pair<bool, std::uint32_t>> expected_last{
      {true, 0}, {true, 1}, {false, 1}, {false, 0}, {true, 2}, {true, 3},
      {false, 3}, {false, 2}, {true, 4}, {true, 5}, {false, 5}, {false, 4}};
  EXPECT_EQ(last, expected_last);
}

struct Totals {
  std::map<std::uint32_t, std::uint64_t> forward_tokens;  // per rank
  std::map<std::uint32_t, std::int64_t> memory;           // per rank, at the end
  std::map<std::uint32_t, std::uint64_t> model_states;
};

// Whether a compute op is the first of its chunk's pass on a stage of layers
// [first, last]: a pass runs the stage as one LAYER_WHOLE op, or layer by layer in
// Ulysses' pieces (forward from PRE_ATTENTION of the first layer, backward from
// POST_ATTENTION of the last).
bool starts_pass(const proto::ComputeOp& c, std::uint32_t first, std::uint32_t last) {
  if (c.layer_part() == proto::LAYER_WHOLE) return true;
  if (c.phase() == proto::BACKWARD) return c.layer_part() == proto::POST_ATTENTION && c.first_layer() == last;
  return c.layer_part() == proto::PRE_ATTENTION && c.first_layer() == first;
}

// The layers [first, last] a rank's compute ops cover.
std::pair<std::uint32_t, std::uint32_t> stage_layers(const proto::Schedule& schedule, const proto::RankProgram& program) {
  std::uint32_t first = ~0u, last = 0;
  for (const OpView op : ops_of(program)) {
    if (!op.is_compute() || compute_of(schedule, op).phase() == proto::OPTIMIZER) continue;
    first = std::min(first, compute_of(schedule, op).first_layer());
    last = std::max(last, compute_of(schedule, op).first_layer() + compute_of(schedule, op).layer_count() - 1);
  }
  return {first, last};
}

Totals totals(const proto::Schedule& schedule) {
  Totals t;
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    const auto [first, last] = stage_layers(schedule, schedule.programs(static_cast<int>(r)));
    for (const OpView op : ops_of(schedule, r)) {
      if (op.is_compute() && compute_of(schedule, op).phase() == proto::FORWARD && starts_pass(compute_of(schedule, op), first, last)) {
        t.forward_tokens[r] += new_tokens_of(compute_of(schedule, op));
      }
      if (op.is_memory()) {
        const auto size = static_cast<std::int64_t>(op.size_bytes());
        t.memory[r] += op.allocate() ? size : -size;
        if (op.memory_tag() == proto::MODEL_STATES) t.model_states[r] += op.size_bytes();
      }
    }
  }
  return t;
}

proto::Trace run(const ResolvedScenario& scenario, const proto::Schedule& schedule) {
  return testing::simulate(scenario, schedule);
}

const std::vector<std::uint64_t> kBatch{16384, 3000, 1000, 500, 2000, 8000, 4096, 700};

TEST(Seq1F1B, EveryTokenOnceSlicesInOrderMemoryBalances) {
  // 2 nodes x 4: 2 stages (one per node) of one 4-GPU SP group; chunks of 16384 / 4 tokens.
  const auto scenario = seq_scenario(2, 4, 16384);
  const auto schedule = make_planner("seq1f1b", scenario)->plan(scenario, kBatch);
  ASSERT_EQ(schedule.num_ranks(), 8u);
  EXPECT_EQ(schedule.summary().pipeline_stages(), 2u);
  EXPECT_EQ(schedule.summary().data_parallel(), 1u);
  std::uint64_t total = 0;
  for (auto len : kBatch) total += len;
  const Totals t = totals(schedule);
  for (std::uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(t.forward_tokens.at(r), total) << "rank " << r;
    EXPECT_EQ(t.memory.at(r), static_cast<std::int64_t>(t.model_states.at(r))) << "rank " << r;
  }
  // Rank 0: the 16384- and 8000-token sequences are split into 4 slices each, with growing
  // context; backwards of a sequence's slices run in reverse.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> forward, backward;  // (chunk, context)
  int kv = 0, dkv = 0, all_to_all = 0;
  const auto [first, last] = stage_layers(schedule, schedule.programs(0));
  for (const OpView op : ops_of(schedule, 0)) {
    if (op.is_compute() && compute_of(schedule, op).phase() != proto::OPTIMIZER) {
      EXPECT_EQ(compute_of(schedule, op).shards(), 4u);
      ASSERT_EQ(compute_of(schedule, op).splits_size(), 1);
      EXPECT_EQ(compute_of(schedule, op).splits(0).kind(), proto::SEQUENCE_PARALLEL);
      EXPECT_EQ(schedule.groups(static_cast<int>(compute_of(schedule, op).splits(0).group())).ranks_size(), 4);
      EXPECT_EQ(compute_of(schedule, op).layer_count(), 1u);  // Ulysses' pieces, layer by layer
    }
    if (op.is_compute() && compute_of(schedule, op).phase() != proto::OPTIMIZER && starts_pass(compute_of(schedule, op), first, last)) {
      const auto entry = std::make_pair(compute_of(schedule, op).chunk(), compute_of(schedule, op).segment_context_tokens(0));
      (compute_of(schedule, op).phase() == proto::FORWARD ? forward : backward).push_back(entry);
    }
    if (op.is_memory() && op.allocate()) {
      kv += op.memory_tag() == proto::KV_EARLIER_SLICES;
      dkv += op.memory_tag() == proto::DKV_BUFFER;
    }
    if (op.is_collective() && op.collective_kind() == proto::ALL_TO_ALL) ++all_to_all;
  }
  EXPECT_EQ(kv, 6);   // 3 non-final slices per split sequence
  EXPECT_EQ(dkv, 2);  // one per split sequence
  // Two all-to-alls per layer and pass (Q+K+V and output; d(output) and dQ+dK+dV).
  EXPECT_EQ(all_to_all, static_cast<int>(2 * (last - first + 1) * (forward.size() + backward.size())));
  ASSERT_GE(forward.size(), 8u);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_GT(forward[i].second, forward[i - 1].second);
  EXPECT_EQ(forward[0].second, 0u);
  // Stage 0 of 2: one warm-up forward, then the first sequence must be complete.
  EXPECT_EQ(backward[0].first, forward[3].first);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_LT(backward[i].second, backward[i - 1].second);

  const auto trace = run(scenario, schedule);
  EXPECT_GT(trace.step_time_ns(), 0);
}

TEST(Seq1F1B, CheckpointingAndDataParallelRun) {
  // 2 nodes x 4, SP 2: 2 stages x 2 replicas; 2 checkpointed layers per stage.
  const auto plain = seq_scenario(2, 4, 16384, "sp_degree: 2");
  const auto checkpointed = seq_scenario(2, 4, 16384, "sp_degree: 2 checkpointed_layers: 2");
  const auto a = make_planner("seq1f1b", plain)->plan(plain, kBatch);
  const auto b = make_planner("seq1f1b", checkpointed)->plan(checkpointed, kBatch);
  EXPECT_EQ(b.summary().data_parallel(), 2u);
  int recompute = 0;
  const auto [first, last] = stage_layers(b, b.programs(0));
  std::set<std::uint32_t> recomputed_layers;
  for (const OpView op : ops_of(b, 0)) {
    if (op.is_compute() && compute_of(b, op).phase() == proto::RECOMPUTE) {
      ++recompute;
      EXPECT_EQ(compute_of(b, op).layer_count(), 1u);
      recomputed_layers.insert(compute_of(b, op).first_layer());
    }
  }
  EXPECT_GT(recompute, 0);
  // The stage's last two layers.
  EXPECT_EQ(recomputed_layers, (std::set<std::uint32_t>{last - 1, last}));
  EXPECT_EQ(first, 0u);
  EXPECT_DOUBLE_EQ(a.summary().model_flops(), b.summary().model_flops());
  EXPECT_LT(b.summary().planned_peak_memory_bytes(0), a.summary().planned_peak_memory_bytes(0));
  const Totals t = totals(b);
  for (std::uint32_t r = 0; r < 8; ++r) EXPECT_EQ(t.memory.at(r), static_cast<std::int64_t>(t.model_states.at(r)));
  EXPECT_GT(run(checkpointed, b).step_time_ns(), 0);
  EXPECT_GT(run(plain, a).step_time_ns(), 0);
}

TEST(Seq1F1B, RunsOnAnotherStrategysScenarioWithDefaults) {
  const auto scenario = testing::fixed_length_scenario(2, 4, 2, 8, 2048, 4096);
  const auto schedule = make_planner("seq1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>(8, 2048));
  EXPECT_EQ(schedule.summary().pipeline_stages(), 2u);
  EXPECT_GT(run(scenario, schedule).step_time_ns(), 0);
}

TEST(Seq1F1B, FailsClearlyWhenTheBatchDoesNotFit) {
  const auto scenario = seq_scenario(1, 1, 4096);
  try {
    make_planner("seq1f1b", scenario)->plan(scenario, std::vector<std::uint64_t>{4096});
    FAIL() << "expected an out-of-memory plan error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 0 (pipeline stage 0) needs"));
  }
}

TEST(Seq1F1B, ScenarioChecks) {
  const auto planner_of = [](const std::string& options) {
    const auto scenario = seq_scenario(2, 4, 4096, options);
    return make_planner("seq1f1b", scenario);
  };
  EXPECT_THROW(planner_of("sp_degree: 8"), InputError);
  EXPECT_THROW(planner_of("sp_degree: 3"), InputError);
  EXPECT_THROW(planner_of("pipeline_stages: 3"), InputError);
  EXPECT_THROW(planner_of("checkpointed_layers: 17"), InputError);
  EXPECT_NO_THROW(planner_of("checkpointed_layers: 16"));
}

// Errors in plan.seq1f1b name the file, the line, the field, the rule and the
// --set that caused them.
TEST(Seq1F1B, OptionErrorsAreLocated) {
  const std::string text = testing::test_scenario_text(2, 4, R"(name: "t"
    model { preset: "llama2-7b" }
    workload { lengths { fixed: 4096 } global_batch: 8 max_length: 4096 }
    plan { strategy: "seq1f1b"
      seq1f1b { sp_degree: 3 }
    })");
  EXPECT_EQ(testing::planner_error(text), "s.textproto:6: plan.seq1f1b.sp_degree: must divide cluster.gpus_per_node 4 (SP stays inside a node), got 3");
  EXPECT_EQ(testing::planner_error(text, {"plan.seq1f1b.sp_degree=2"}), "");
  EXPECT_EQ(testing::planner_error(text, {"plan.seq1f1b={checkpointed_layers: 17}"}),
            "s.textproto: plan.seq1f1b.checkpointed_layers: must be <= the 16 layers of the smallest stage, got 17 (set by "
            "--set plan.seq1f1b={checkpointed_layers: 17})");
  EXPECT_EQ(testing::planner_error(text, {"plan.seq1f1b.sp_degree=4", "plan.zero_stage=3"}),
            "s.textproto: plan.zero_stage: seq1f1b supports ZeRO stages 0 to 2, got 3 (set by --set plan.zero_stage=3)");
}

}  // namespace
}  // namespace eppsim
