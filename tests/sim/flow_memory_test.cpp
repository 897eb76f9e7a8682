// The flow engine's platform estimate for the memory guard: its actors (one
// per rank and stream with ops, and two more) and hosts (the chips its ranks
// use), counted as simgrid_memory_bytes counts them; the forked child's own
// check of its exact platform.
#include "sim/engine/flow_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/memory_limit.h"
#include "sim/engine/simgrid_platform.h"
#include "tests/schedule/schedule_fixture.h"
#include "tests/sim/flow_fixture.h"

namespace eppsim {
namespace {

using testing::FlowCluster;
using testing::HandSchedule;

using testing::kNic;
using testing::kNvlink;

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

TEST(FlowMemory, TheChildRefusesAPlatformPastTheLimitNamingItsHostsAndActors) {
  const std::uint64_t limit = memory_limit_bytes();
  set_memory_limit_bytes(std::uint64_t{1} << 20);
  try {
    check_platform_memory(1024, 10, {.stack_kib = 64, .guard_page = true});
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the flow engine's SimGrid platform (1024 hosts, 10 actors) needs about"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("use --engine analytic"));
  }
  set_memory_limit_bytes(limit);
  const PlatformMemory fits = check_platform_memory(2, 10, {.stack_kib = 64, .guard_page = true});
  EXPECT_EQ(fits.platform_bytes, simgrid_memory_bytes(2, 10, {.stack_kib = 64, .guard_page = true},
                                                      address_space_limit_bytes().has_value()));
  EXPECT_GT(fits.held_bytes, 0u);
}

TEST(FlowMemory, NothingWithoutAPlacement) {
  const FlowCluster cluster(testing::simple_topology(2, 2, kNvlink, kNic));
  EXPECT_EQ(flow_platform_memory_bytes(three_ranks().schedule(), EngineContext{*cluster.cost}), 0u);
}

}  // namespace
}  // namespace eppsim
