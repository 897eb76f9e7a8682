#include "traces/plan_summary.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

TEST(PlanDecisionsSummary, OneOrTwoLines) {
  proto::PlanDecisions d;
  EXPECT_EQ(plan_decisions_summary(d), "");  // no decisions recorded (an imported schedule)
  d.set_reproduces("InfiniPipe");
  d.set_pipeline_stages(4);
  d.add_sp_degrees(8);
  d.set_data_parallel(1);
  d.set_tensor_parallel(1);
  d.set_context_parallel(1);
  d.set_ranks(32);
  d.add_slice_counts(4);
  d.set_pipelines(3);
  d.set_chunks(37);
  d.set_checkpointed_layer_chunks(12);
  d.set_layer_chunks(64);
  d.add_solves()->set_status(proto::SOLVE_OPTIMAL);
  d.add_solves()->set_status(proto::SOLVE_OPTIMAL);
  d.add_solves()->set_status(proto::SOLVE_FELL_BACK);
  EXPECT_EQ(plan_decisions_summary(d),
            "4 stages x 8 SP x 1 DP = 32 ranks (InfiniPipe)\n"
            "K=4, 3 pipelines, 37 chunks; checkpointing 12 of 64 layer-chunks; MILPs: 2 optimal, 1 fell back\n");

  proto::PlanDecisions flexsp;
  flexsp.set_reproduces("FlexSP");
  flexsp.set_pipeline_stages(1);
  flexsp.add_sp_degrees(8);
  flexsp.add_sp_degrees(4);
  flexsp.set_data_parallel(3);
  flexsp.set_ranks(16);
  flexsp.set_chunks(2);
  for (auto groups : {std::vector<std::uint32_t>{8, 8}, std::vector<std::uint32_t>{8, 4, 4}}) {
    auto* mb = flexsp.add_micro_batch_groups();
    for (auto g : groups) mb->add_sp_degrees(g);
  }
  flexsp.add_solves()->set_status(proto::SOLVE_NOT_NEEDED);
  flexsp.add_solves()->set_status(proto::SOLVE_FEASIBLE_AT_LIMIT);
  EXPECT_EQ(plan_decisions_summary(flexsp),
            "1 stage x 8/4 SP x 3 DP, 16 ranks (FlexSP)\n"
            "2 chunks (SP groups 8+8, 8+4+4); MILPs: 1 feasible at limit, 1 not needed\n");

  // Past 16 values a list says how often each value occurs, largest first.
  proto::PlanDecisions large;
  large.set_pipeline_stages(4);
  large.add_sp_degrees(8);
  large.set_data_parallel(100);
  large.set_ranks(3200);
  large.set_pipelines(100);
  large.set_chunks(1825);
  for (int i = 0; i < 100; ++i) large.add_slice_counts(i < 72 ? 8 : i < 99 ? 6 : 4);
  auto* groups = large.add_micro_batch_groups();
  for (int i = 0; i < 17; ++i) groups->add_sp_degrees(i < 15 ? 8 : 4);
  EXPECT_EQ(plan_decisions_summary(large),
            "4 stages x 8 SP x 100 DP = 3200 ranks\n"
            "K=8 (x72)/6 (x27)/4 (x1), 100 pipelines, 1825 chunks (SP groups 8 (x15)+4 (x2))\n");

  proto::PlanDecisions megatron;
  megatron.set_pipeline_stages(2);
  megatron.add_sp_degrees(1);
  megatron.set_tensor_parallel(2);
  megatron.set_context_parallel(2);
  megatron.set_data_parallel(2);
  megatron.set_ranks(16);
  megatron.set_chunks(1);
  EXPECT_EQ(plan_decisions_summary(megatron), "2 stages x 1 SP x 2 TP x 2 CP x 2 DP = 16 ranks\n1 chunk\n");
}

// A Schedule without decisions (imported from Chakra, say) is summed up from
// its summary; one with decisions by them.
TEST(PlanSummary, FallsBackToTheScheduleSummary) {
  proto::Schedule schedule;
  schedule.set_num_ranks(16);
  schedule.mutable_summary()->set_pipeline_stages(2);
  schedule.mutable_summary()->set_data_parallel(8);
  schedule.mutable_summary()->set_micro_batches(12);
  EXPECT_EQ(plan_summary(schedule), "16 ranks (2 pipeline stages x 8 data-parallel), 12 micro-batches\n");
  auto* d = schedule.mutable_summary()->mutable_decisions();
  d->set_pipeline_stages(2);
  d->add_sp_degrees(1);
  d->set_data_parallel(8);
  d->set_ranks(16);
  d->set_chunks(12);
  EXPECT_EQ(plan_summary(schedule), "2 stages x 1 SP x 8 DP = 16 ranks\n12 chunks\n");
}

TEST(PlanSummary, NamesEverySolveStatus) {
  EXPECT_EQ(solve_status_name(proto::SOLVE_OPTIMAL), "optimal");
  EXPECT_EQ(solve_status_name(proto::SOLVE_FEASIBLE_AT_LIMIT), "feasible at limit");
  EXPECT_EQ(solve_status_name(proto::SOLVE_FELL_BACK), "fell back");
  EXPECT_EQ(solve_status_name(proto::SOLVE_NOT_NEEDED), "not needed");
}

}  // namespace
}  // namespace eppsim
