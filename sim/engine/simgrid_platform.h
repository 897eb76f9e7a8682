#pragma once
// The SimGrid platform of a flow-engine run, built in code from the topology
// graph (models/topology/topology.h), no XML.
//
// Settings (start_simgrid_engine): network/model:CM02 (plain max-min sharing,
// no latency or bandwidth correction factors), network/crosstraffic:0 (no ACK
// traffic on the reverse direction) and network/TCP-gamma:0 (no TCP window cap
// of gamma / (2 route latency) on a flow's rate). With them an uncontended
// transfer of B bytes over a route of latency L (the sum of its links'
// latencies) and bottleneck bandwidth W takes exactly L + B/W
// (shared/reference/stack.md measured 1.00000 against the closed forms), and
// concurrent flows share every link max-min fairly. Logs below warnings are
// silenced, so only eppsim's messages reach stderr.
//
// Layout: one flat full zone.
//   hosts   one per chip a rank runs on ("chip12"), and, for collectives that
//           run on C > 1 parallel channels, one more per extra channel of the
//           chip ("chip12#3"): SimGrid routes per host pair, so a channel's
//           flows need their own hosts to take their own equal-cost paths.
//   links   one split-duplex link per topology link some route uses ("link7",
//           bandwidth per direction and latency as in the graph); a route
//           takes its UP side when it crosses the link from Link::a to
//           Link::b, DOWN otherwise.
//   routes  Topology::route(src, dst, channel_flow_hash(src, dst, channel))
//           (the path RoutedNetwork prices, link for link) for exactly the
//           (src chip, dst chip, channel) flows given, one direction each; a
//           flow the schedule never makes gets no route.
// Why not a hierarchy (a zone per node under a root zone): SimGrid routes
// between zones through one gateway per zone, so every chip of a node would
// share one path out of it, losing the per-chip NICs of rail-optimized and
// simple clusters and the per-chip ECMP paths of fat-trees; and SimGrid 3.32
// slows down past ~1000 zones (stack.md). The flat zone's routes cost memory
// only for the flows used, but SimGrid's FullZone keeps an H x H table of route
// pointers (8 bytes per host pair: 8 MiB at 1,024 hosts, 128 MiB at 4,096),
// which bounds the flow engine to a few thousand hosts.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "models/topology/topology.h"

namespace simgrid::s4u {
class Host;
class Engine;
class SplitDuplexLink;
}  // namespace simgrid::s4u

namespace eppsim {

// One direction of traffic between two chips on one channel.
struct PlatformFlow {
  VertexId src = 0;
  VertexId dst = 0;
  std::uint32_t channel = 0;
  bool operator==(const PlatformFlow&) const = default;
};

// The stacks of SimGrid's actors (contexts/stack-size and guard-size). SimGrid's
// default, 8 MiB each, takes 8 GiB of address space at 1,024 actors, so under
// an address-space limit its stacks fail to allocate ("Failed to allocate
// stack"); the flow engine's actors need under 8 KiB (they run shipped
// scenarios and the soak campaign at 8 KiB and crash at 4 KiB).
struct ActorStacks {
  std::uint32_t stack_kib = 8192;
  bool guard_page = true;  // a page that turns an overflow into SIGSEGV; two memory mappings per actor
};
// The stacks for `actors` actors: 64 KiB (32 KiB past 16,384 actors), with
// guard pages unless two mappings per actor, plus 8,192 for the rest of the
// process, would pass `max_map_count` (vm.max_map_count; SimGrid aborts with
// "Failed to protect stack" past it).
ActorStacks actor_stacks_for(std::size_t actors, std::uint64_t max_map_count);
// vm.max_map_count of this machine (65,530 when it cannot be read).
std::uint64_t max_map_count();

// The memory SimGrid takes for a platform of `hosts` hosts and `actors` actors
// with `stacks`, as the memory guard counts it (base/memory_limit.h): FullZone's
// table of H x H route pointers, and for each actor about 12 KiB of SimGrid's
// own state and its stack. Under an address-space limit (`address_space`) a
// stack counts whole, with its guard page. In the resident set only the stack
// pages an actor touches count, 2 KiB, with guard pages or without: 14 KiB an
// actor in all, a little above what was measured (shared/reference/stack.md:
// 12 KB an actor; step_16k's 90,114 actors of unguarded 32 KiB stacks, 12.4
// KiB each: docs/dev/memory-guard.md).
std::uint64_t simgrid_memory_bytes(std::size_t hosts, std::size_t actors, ActorStacks stacks, bool address_space);

// Creates this process's SimGrid engine with the settings above and the
// actors' `stacks`. SimGrid 3.32 allows one engine per process (a second
// continues the first one's clock and rejects the settings), so a process calls
// it once (the flow engine forks a child per run, sim/engine/forked_run.h). The
// engine lives until the process ends.
simgrid::s4u::Engine& start_simgrid_engine(ActorStacks stacks = {});

class SimgridPlatform {
 public:
  // Builds and seals the platform on the running engine: hosts for `chips`
  // (channel 0) and for every flow's endpoints, routes for `flows` (duplicates
  // and flows from a chip to itself are skipped).
  SimgridPlatform(const Topology& topology, std::span<const VertexId> chips, std::span<const PlatformFlow> flows);
  // How many hosts that platform has (what its route table grows with).
  static std::size_t hosts_needed(std::span<const VertexId> chips, std::span<const PlatformFlow> flows);

  // The host of `chip` for `channel` (built for it; throws std::out_of_range otherwise).
  simgrid::s4u::Host* host(VertexId chip, std::uint32_t channel = 0) const;
  // The SimGrid link of topology link `id`; null when no route uses it.
  simgrid::s4u::SplitDuplexLink* link(LinkId id) const;
  // Of the links some transfer is crossing now, the one of least bandwidth
  // (the lowest id among equals); none when no transfer is under way.
  std::optional<LinkId> slowest_link_in_use() const;
  std::size_t host_count() const { return hosts_.size(); }
  std::size_t link_count() const { return links_built_; }
  std::size_t route_count() const { return routes_built_; }

 private:
  std::unordered_map<std::uint64_t, simgrid::s4u::Host*> hosts_;
  std::unordered_map<LinkId, simgrid::s4u::SplitDuplexLink*> links_;
  std::size_t links_built_ = 0;
  std::size_t routes_built_ = 0;
};

}  // namespace eppsim
