#pragma once
// What the flow engine's SimGrid platform takes, for the memory guard
// (base/memory_limit.h; docs/dev/memory-guard.md has the measured figures).
#include <cstddef>
#include <cstdint>

#include "sim/engine/engine_registry.h"
#include "sim/engine/simgrid_platform.h"
#include "proto/schedule.pb.h"

namespace eppsim {

// The actors a run of `schedule` starts before its collectives' extra
// channels: one per (rank, stream) with ops, the controller and the fault
// injector.
std::size_t actors_of_streams(const proto::Schedule& schedule);

// The memory guard's estimate of the SimGrid platform a run of `schedule`
// builds (simgrid_memory_bytes), before its flows are planned: a host per
// chip the ranks use and actors_of_streams (extra channels' hosts and actors,
// known once the collectives are planned, are left out; the forked child
// checks its exact figure again before it starts SimGrid). Counted as the
// memory limit counts (a whole stack under an address-space limit). 0 without
// a placement.
std::uint64_t flow_platform_memory_bytes(const proto::Schedule& schedule, const EngineContext& context);

// In the forked child, before it starts SimGrid: what it holds and its exact
// platform (simgrid_memory_bytes). check_platform_memory throws InputError
// when their sum passes the memory limit (check_memory_estimate, naming the
// hosts and actors); log_platform_memory prints them at debug after the run,
// with the child's own pages (private_memory_bytes) and peak RSS: the figures
// docs/dev/memory-guard.md fits.
struct PlatformMemory {
  std::size_t hosts = 0, actors = 0;
  std::uint64_t held_bytes = 0, platform_bytes = 0;
};
PlatformMemory check_platform_memory(std::size_t hosts, std::size_t actors, ActorStacks stacks);
void log_platform_memory(const PlatformMemory& memory, std::size_t ops);

}  // namespace eppsim
