#include "sim/plan/sliced_sequences.h"

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/plan/planner.h"
#include "test_scenarios.h"
#include "schedule/compute_segments.h"
#include "schedule/program_ops.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;

TEST(SlicedSequences, GathersSlicesInOrderAndLeavesWholeSequencesOut) {
  SlicedSequences sliced;
  const std::array<std::uint32_t, 2> low{4, 0}, high{2, 4};
  sliced.add(7, 1, 3, 1000, low);
  sliced.add(2, 0, 0, 500, low);  // one slice: not split
  sliced.add(7, 1, 4, 600, high);
  sliced.add(7, 1, 9, 400, low);
  proto::PlanDecisions decisions;
  sliced.write_to(&decisions);
  ASSERT_EQ(decisions.sliced_sequences_size(), 1);
  const auto& s = decisions.sliced_sequences(0);
  EXPECT_EQ(s.sequence(), 7u);
  EXPECT_EQ(s.length_tokens(), 2000u);
  EXPECT_EQ(s.replica(), 1u);
  EXPECT_THAT(s.chunks(), ElementsAre(3u, 4u, 9u));
  EXPECT_THAT(s.ranks(), ElementsAre(0u, 2u, 4u));
}

TEST(SlicedSequences, OneSequenceOnTwoReplicasIsABug) {
  SlicedSequences sliced;
  const std::array<std::uint32_t, 1> ranks{0};
  sliced.add(7, 0, 0, 10, ranks);
  EXPECT_THROW(sliced.add(7, 1, 1, 10, ranks), std::logic_error);
}

// 2 nodes x 4 A100-80GB, llama2-7b, two replicas of 2-stage pipelines with
// 2-way SP: long sequences are split by both planners.
ResolvedScenario scenario(const std::string& strategy) {
  return testing::test_scenario(2, 4, fmt::format(R"(
    name: "sliced"
    seed: 3
    model {{ preset: "llama2-7b" }}
    workload {{ lengths {{ fixed: 1024 }} global_batch: 8 max_length: 8192 }}
    plan {{ strategy: "{}" zero_stage: 1 epp {{ pipeline_stages: 2 sp_degree: 2 }}
           seq1f1b {{ pipeline_stages: 2 sp_degree: 2 }} }}
  )",
                                                strategy));
}

// Each listed sequence has its batch length, and its chunks are its slices on
// every rank listed: each chunk's first forward op attends to exactly the
// tokens of the slices before it, and the slices add up to the sequence.
void expect_slices_match(const std::string& strategy, const std::vector<std::uint64_t>& batch) {
  SCOPED_TRACE(strategy);
  const auto sc = scenario(strategy);
  const proto::Schedule schedule = make_planner(strategy, sc)->plan(sc, batch);
  const auto& sliced = schedule.summary().decisions().sliced_sequences();
  ASSERT_GT(sliced.size(), 0);
  std::set<std::uint64_t> seen;
  for (const auto& s : sliced) {
    ASSERT_LT(s.sequence(), batch.size());
    EXPECT_TRUE(seen.insert(s.sequence()).second);
    EXPECT_EQ(s.length_tokens(), batch[s.sequence()]) << "sequence " << s.sequence();
    EXPECT_GE(s.chunks_size(), 2);
    // The first forward compute op of each chunk on each of its ranks.
    for (const auto rank : s.ranks()) {
      std::map<std::uint32_t, Segment> first_segment;
      for (const OpView op : ops_of(schedule, rank)) {
        if (op.is_compute() && compute_of(schedule, op).phase() == proto::FORWARD && compute_of(schedule, op).segment_tokens_size() > 0) {
          first_segment.try_emplace(compute_of(schedule, op).chunk(), segments_of(compute_of(schedule, op)).front());
        }
      }
      std::uint64_t context = 0;
      for (const auto chunk : s.chunks()) {
        ASSERT_TRUE(first_segment.count(chunk)) << "rank " << rank << " runs no chunk " << chunk;
        EXPECT_EQ(first_segment[chunk].context_tokens, context) << "rank " << rank << " chunk " << chunk;
        context += first_segment[chunk].tokens;
      }
      EXPECT_EQ(context, s.length_tokens()) << "rank " << rank;
    }
  }
  // The longest sequence is split.
  std::uint64_t longest = 0;
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (batch[i] > batch[longest]) longest = i;
  EXPECT_TRUE(seen.count(longest));
}

TEST(SlicedSequences, EppAndSeq1F1BNameTheSlicesTheyPlanned) {
  const std::vector<std::uint64_t> batch{1000, 8192, 600, 7000, 300, 5000, 900, 6500, 200, 400};
  expect_slices_match("epp", batch);
  expect_slices_match("seq1f1b", batch);
}

}  // namespace
}  // namespace eppsim
