#include "schedule/op_cost.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

proto::ComputeOp work() {
  proto::ComputeOp c;
  c.set_phase(proto::BACKWARD);
  c.set_first_layer(4);
  c.set_layer_count(8);
  c.set_shards(2);
  c.set_layer_part(proto::ATTENTION);
  for (const std::uint64_t t : {1024u, 512u}) c.add_segment_tokens(t);
  for (const std::uint64_t t : {0u, 2048u}) c.add_segment_context_tokens(t);
  return c;
}

// Works that differ only in what compute_duration does not read are the same
// to it: equal, with equal hashes. A change to anything it reads tells them apart.
TEST(OpCost, ComputeDurationInputsAreWhatTheDurationReads) {
  const proto::ComputeOp base = work();
  proto::ComputeOp same = base;
  same.set_first_layer(12);  // only whether it is 0 counts (the embedding)
  same.set_stage(3);
  same.set_chunk(7);
  same.set_flops(1e12);
  EXPECT_TRUE(same_compute_duration_inputs(base, same));
  EXPECT_EQ(compute_duration_inputs_hash(base), compute_duration_inputs_hash(same));
  proto::ComputeOp one_shard = base, no_shards = base;
  one_shard.set_shards(1);
  no_shards.set_shards(0);  // unset: one shard
  EXPECT_TRUE(same_compute_duration_inputs(one_shard, no_shards));
  EXPECT_EQ(compute_duration_inputs_hash(one_shard), compute_duration_inputs_hash(no_shards));

  const std::vector<std::function<void(proto::ComputeOp&)>> changes = {
      [](proto::ComputeOp& c) { c.set_phase(proto::FORWARD); },
      [](proto::ComputeOp& c) { c.set_first_layer(0); },
      [](proto::ComputeOp& c) { c.set_layer_count(9); },
      [](proto::ComputeOp& c) { c.set_shards(4); },
      [](proto::ComputeOp& c) { c.set_layer_part(proto::LAYER_WHOLE); },
      [](proto::ComputeOp& c) { c.set_includes_lm_head(true); },
      [](proto::ComputeOp& c) { c.set_memory_traffic_bytes(1); },
      [](proto::ComputeOp& c) { c.set_segment_tokens(1, 511); },
      [](proto::ComputeOp& c) { c.set_segment_context_tokens(0, 1); },
      [](proto::ComputeOp& c) { c.add_segment_tokens(1); },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    proto::ComputeOp other = base;
    changes[i](other);
    EXPECT_FALSE(same_compute_duration_inputs(base, other)) << "change " << i;
    EXPECT_NE(compute_duration_inputs_hash(base), compute_duration_inputs_hash(other)) << "change " << i;
  }
}

}  // namespace
}  // namespace eppsim
