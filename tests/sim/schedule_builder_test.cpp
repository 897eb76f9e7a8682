// The Schedule every planner writes is self-contained: a header with the schema
// version, the producer and the model's shape, and compute ops that say how
// their chunk is split; no stand-in ops (fused all-to-alls, scaled all-gathers).
#include "tests/sim/test_scenarios.h"
#include "sim/plan/schedule_builder.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/plan/planner.h"
#include "sim/run.h"
#include "schedule/model_shape.h"
#include "schedule/program_ops.h"
#include "schedule/schedule_schema.h"
#include "scenario/scenario.h"
#include "traces/trace_report.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

// Two ranks running the same work share one entry; a different work gets its own.
TEST(ScheduleBuilder, EqualComputeWorkIsListedOnce) {
  ScheduleBuilder b(2, "s", "epp");
  const auto s = b.stream("compute");
  proto::ComputeOp work;
  work.set_phase(proto::FORWARD);
  work.set_layer_count(4);
  work.set_flops(1e12);
  b.compute(0, s, {}, work);
  b.compute(1, s, {}, work);
  work.set_phase(proto::BACKWARD);
  b.compute(1, s, {}, work);
  const proto::Schedule schedule = b.finish();
  ASSERT_EQ(schedule.shared_computes_size(), 2);
  const OpView r0 = ops_of(schedule, 0)[0];
  const auto r1 = ops_of(schedule, 1);
  EXPECT_EQ(r0.shared_compute(), 0u);
  EXPECT_EQ(r1[0].shared_compute(), 0u);
  EXPECT_EQ(r1[1].shared_compute(), 1u);
  EXPECT_TRUE(r1[1].is_compute());
  EXPECT_EQ(compute_of(schedule, r1[1]).phase(), proto::BACKWARD);
  EXPECT_EQ(compute_of(schedule, r0).layer_count(), 4u);
}

// share() lists a work for compute_shared() (each call a new entry: the planner
// knows what it shares); an index never listed is a planner's bug.
TEST(ScheduleBuilder, SharedWorkIsListedBeforeUse) {
  ScheduleBuilder b(2, "s", "epp");
  const auto s = b.stream("compute");
  proto::ComputeOp work;
  work.set_phase(proto::FORWARD);
  const auto index = b.share(work);
  b.compute_shared(0, s, {}, index);
  b.compute_shared(1, s, {}, index);
  EXPECT_THROW(b.compute_shared(1, s, {}, index + 1), std::logic_error);
  EXPECT_EQ(b.share(work), index + 1);
  const proto::Schedule schedule = b.finish();
  EXPECT_EQ(schedule.shared_computes_size(), 2);
  EXPECT_EQ(ops_of(schedule, 1)[0].shared_compute(), index);
}

TEST(ScheduleBuilder, HeaderCarriesVersionProducerAndModel) {
  const TransformerSpec& model = *find_model_preset("llama3-8b");
  ScheduleBuilder b(2, "s", "epp", model);
  const proto::Schedule schedule = b.finish();
  EXPECT_EQ(schedule.header().schema_version(), kScheduleSchemaVersion);
  EXPECT_EQ(kScheduleSchemaVersion, 5u);
  EXPECT_EQ(schedule.header().producer(), fmt::format("eppsim {} planner epp", eppsim_version()));
  EXPECT_EQ(from_model_shape(schedule.header().model(), "s").total_params(), model.total_params());

  ScheduleBuilder hand(1, "t", "hand");
  EXPECT_EQ(hand.schedule().header().schema_version(), kScheduleSchemaVersion);
  EXPECT_FALSE(hand.schedule().header().has_model());
}

TEST(WorkSplit, ShardsAreTheProductOfTheGroupSizes) {
  WorkSplit split;
  split.add(proto::TENSOR_PARALLEL, 3, 4).add(proto::CONTEXT_PARALLEL, 5, 2).add(proto::SEQUENCE_PARALLEL, 7, 1);
  EXPECT_EQ(split.shards, 8u);
  ASSERT_EQ(split.splits.size(), 2u);
  proto::ComputeOp op;
  split.apply(op);
  EXPECT_EQ(op.shards(), 8u);
  EXPECT_EQ(op.splits(0).kind(), proto::TENSOR_PARALLEL);
  EXPECT_EQ(op.splits(0).group(), 3u);
  EXPECT_EQ(op.splits(1).kind(), proto::CONTEXT_PARALLEL);
  proto::ComputeOp whole;
  WorkSplit{}.apply(whole);
  EXPECT_EQ(whole.shards(), 0u);
  EXPECT_EQ(whole.splits_size(), 0);
}

// The quickstart (2 x 8 GPUs, llama2-7b) with a small batch, under `strategy`;
// packed-1f1b with tensor and context parallelism of 2.
ResolvedScenario quickstart_for(const std::string& strategy) {
  return testing::load_quickstart({"workload.global_batch=32", "plan.strategy=" + strategy,
                                   "plan.packed_1f1b.tensor_parallel=2", "plan.packed_1f1b.context_parallel=2"});
}

class EveryStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryStrategy, WritesASelfContainedScheduleWithoutStandIns) {
  const auto sc = quickstart_for(GetParam());
  const proto::Schedule schedule = make_planner(GetParam(), sc)->plan(PlanContext(sc, simulated_step_seconds), sample_batch(sc));
  // Header.
  EXPECT_EQ(schedule.header().schema_version(), kScheduleSchemaVersion);
  EXPECT_EQ(schedule.header().producer(), fmt::format("eppsim {} planner {}", eppsim_version(), GetParam()));
  const TransformerSpec model = from_model_shape(schedule.header().model(), "schedule");
  EXPECT_EQ(model.name, sc.model.name);
  EXPECT_EQ(model.total_params(), sc.model.total_params());
  // Each compute work is listed once, and the ranks of a group share it: fewer
  // works than compute ops.
  std::set<std::string> works;
  for (const auto& work : schedule.shared_computes()) {
    EXPECT_TRUE(works.insert(work.SerializeAsString()).second) << work.ShortDebugString();
  }
  int compute_ops = 0;
  for (const auto& program : schedule.programs()) {
    const auto ops = ops_of(program);
    compute_ops += static_cast<int>(std::count_if(ops.begin(), ops.end(), [](const OpView op) { return op.is_compute(); }));
  }
  EXPECT_LT(schedule.shared_computes_size(), compute_ops);
  // Splits: every split names a group holding the rank, shards is their product,
  // and every strategy here splits its chunks.
  int split_ops = 0;
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    const auto ops = ops_of(schedule, r);
    for (const OpView op : ops) {
      const std::uint32_t i = op.index();
      if (op.is_compute() && compute_of(schedule, op).phase() != proto::OPTIMIZER) {
        const auto& c = compute_of(schedule, op);
        std::uint32_t product = 1;
        std::set<proto::SplitKind> kinds;
        for (const auto& split : c.splits()) {
          const auto& group = schedule.groups(static_cast<int>(split.group()));
          product *= static_cast<std::uint32_t>(group.ranks_size());
          EXPECT_TRUE(std::find(group.ranks().begin(), group.ranks().end(), r) != group.ranks().end());
          EXPECT_TRUE(kinds.insert(split.kind()).second) << "one split per kind";
        }
        EXPECT_EQ(std::max(c.shards(), 1u), product) << "rank " << r << " op " << i;
        split_ops += c.splits_size() > 0;
        // A piece of a layer is one layer.
        if (c.layer_part() != proto::LAYER_WHOLE) {
          EXPECT_EQ(c.layer_count(), 1u);
        }
      }
      // No stand-ins: an all-to-all follows the piece of one layer it belongs to,
      // and no all-gather runs on the compute stream (context parallelism is a ring).
      if (op.is_collective() && op.collective_kind() == proto::ALL_TO_ALL) {
        int before = static_cast<int>(i) - 1;
        while (before >= 0 && ops[static_cast<std::uint32_t>(before)].stream() != op.stream()) --before;
        ASSERT_GE(before, 0);
        const OpView piece = ops[static_cast<std::uint32_t>(before)];
        ASSERT_TRUE(piece.is_compute()) << "rank " << r << " op " << i;
        EXPECT_EQ(compute_of(schedule, piece).layer_count(), 1u);
        EXPECT_NE(compute_of(schedule, piece).layer_part(), proto::LAYER_WHOLE);
      }
      if (op.is_collective() && op.collective_kind() == proto::ALL_GATHER) {
        EXPECT_NE(schedule.stream_names(static_cast<int>(op.stream())), "compute") << "rank " << r << " op " << i;
      }
    }
  }
  EXPECT_GT(split_ops, 0);
}

INSTANTIATE_TEST_SUITE_P(Planners, EveryStrategy, ::testing::ValuesIn(planner_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace eppsim
