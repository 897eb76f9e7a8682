// The flow engine's platform estimate for the memory guard: its actors (one
// per rank and stream with ops, and two more) and hosts (the chips its ranks
// use), counted as simgrid_memory_bytes counts them.
#include "sim/engine/flow_memory.h"

#include <gtest/gtest.h>

#include "base/memory_limit.h"
#include "sim/engine/simgrid_platform.h"
#include "tests/schedule/schedule_fixture.h"
#include "tests/sim/flow_fixture.h"

namespace eppsim {
namespace {

using testing::FlowCluster;
using testing::HandSchedule;

const LinkParams kNvlink = testing::link(300e9, 1e-6);
const LinkParams kNic = testing::link(50e9, 4e-6);

// Rank 0 computes and sends on two streams, rank 1 receives on one, rank 2 has no ops.
HandSchedule three_ranks() {
  HandSchedule h(3);
  h.compute(0, 0);
  h.send(0, 1, 1, 8, 0);
  h.recv(1, 1, 0, 8, 0);
  return h;
}

TEST(FlowMemory, AnActorPerRankAndStreamWithOpsAndTwoMore) {
  EXPECT_EQ(actors_of_streams(three_ranks().schedule()), 3u + 2u);
}

TEST(FlowMemory, ThePlatformOfTheChipsInUseAndTheActors) {
  HandSchedule h = three_ranks();
  // Ranks 0 and 2 share a chip: two hosts.
  const FlowCluster cluster(testing::simple_topology(2, 2, kNvlink, kNic), {0, 3, 0});
  const bool address_space = address_space_limit_bytes().has_value();
  EXPECT_EQ(flow_platform_memory_bytes(h.schedule(), cluster.context()),
            simgrid_memory_bytes(2, 5, actor_stacks_for(5, max_map_count()), address_space));
}

TEST(FlowMemory, NothingWithoutAPlacement) {
  const FlowCluster cluster(testing::simple_topology(2, 2, kNvlink, kNic));
  EXPECT_EQ(flow_platform_memory_bytes(three_ranks().schedule(), EngineContext{*cluster.cost}), 0u);
}

}  // namespace
}  // namespace eppsim
