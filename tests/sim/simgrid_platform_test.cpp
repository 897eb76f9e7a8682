// The SimGrid platform built from a topology graph: routes follow
// Topology::route link for link (the ECMP path of each channel), links carry
// the graph's bandwidth and latency, and only the flows given get routes.
// SimGrid allows one engine per process, so each check builds its platform in
// a forked child (forked_run.h) and brings back what SimGrid reports.
#include "sim/engine/simgrid_platform.h"

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

#include "models/topology/topology.h"
#include "sim/engine/forked_run.h"
#include "tests/sim/flow_fixture.h"

namespace eppsim {
namespace {

TopologyConfig fat_tree() {
  TopologyConfig config;
  config.name = "ft";
  config.nodes = 16;
  config.chips_per_node = 8;
  config.node.link = testing::link(300e9, 1e-6);
  FatTreeConfig ft;
  ft.radix = 8;
  ft.levels = 3;
  ft.oversubscription_down = 3;
  ft.link = testing::link(25e9, 2e-6);
  config.network = ft;
  return config;
}

// What SimGrid says of each flow: "link names (route) | latency | bandwidths", one line each,
// then the platform's counts.
std::string simgrid_routes(const Topology& topology, const std::vector<VertexId>& chips,
                           const std::vector<PlatformFlow>& flows) {
  return run_forked("platform test", [&] {
    start_simgrid_engine();
    const SimgridPlatform platform(topology, chips, flows);
    std::string out;
    for (const PlatformFlow& f : flows) {
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0.0;
      platform.host(f.src, f.channel)->route_to(platform.host(f.dst, f.channel), links, &latency);
      std::vector<std::string> names, bandwidths;
      for (auto* l : links) {
        names.push_back(l->get_name());
        bandwidths.push_back(fmt::format("{:.6g}", l->get_bandwidth()));
      }
      out += fmt::format("{} | {:.9g} | {}\n", fmt::join(names, " "), latency, fmt::join(bandwidths, " "));
    }
    out += fmt::format("hosts {} links {} routes {}\n", platform.host_count(), platform.link_count(),
                       platform.route_count());
    return out;
  });
}

// The same from the topology graph.
std::string expected_routes(const Topology& topology, const std::vector<PlatformFlow>& flows, std::size_t hosts) {
  std::string out;
  std::set<LinkId> used;
  std::set<std::tuple<VertexId, VertexId, std::uint32_t>> routes;
  for (const PlatformFlow& f : flows) {
    std::vector<LinkId> path;
    topology.route(f.src, f.dst, channel_flow_hash(f.src, f.dst, f.channel), &path);
    std::vector<std::string> names, bandwidths;
    double latency = 0.0;
    VertexId at = f.src;
    for (LinkId id : path) {
      const Link& l = topology.link(id);
      const bool forward = l.a == at;
      names.push_back(fmt::format("link{}_{}", id, forward ? "UP" : "DOWN"));
      bandwidths.push_back(fmt::format("{:.6g}", l.bandwidth.value));
      latency += l.latency.value;
      at = forward ? l.b : l.a;
      used.insert(id);
    }
    routes.insert({f.src, f.dst, f.channel});
    out += fmt::format("{} | {:.9g} | {}\n", fmt::join(names, " "), latency, fmt::join(bandwidths, " "));
  }
  out += fmt::format("hosts {} links {} routes {}\n", hosts, used.size(), routes.size());
  return out;
}

TEST(SimgridPlatform, RoutesFollowTheTopologyLinkForLinkOnEachChannel) {
  const auto topology = build_topology(fat_tree());
  // Within a node, across a leaf, across pods; channel 1 hashes onto other spines.
  const std::vector<PlatformFlow> flows{{0, 1, 0}, {1, 0, 0}, {0, 9, 0}, {0, 100, 0}, {100, 0, 0},
                                        {0, 100, 1}, {5, 77, 1}, {0, 100, 0}};
  const std::vector<VertexId> chips{0, 1, 5, 9, 77, 100};
  const std::string got = simgrid_routes(*topology, chips, flows);
  // 6 chips on channel 0; chips 0, 5, 77 and 100 again on channel 1.
  EXPECT_EQ(got, expected_routes(*topology, flows, 10));
  EXPECT_THAT(got, ::testing::HasSubstr("_DOWN"));  // the way back crosses links against their a -> b
}

TEST(SimgridPlatform, OnlyTheFlowsGivenGetRoutesAndLinks) {
  const auto topology = build_topology(testing::simple_topology(4, 8, testing::link(300e9, 1e-6),
                                                                testing::link(50e9, 4e-6)));
  std::vector<VertexId> chips(32);
  for (VertexId c = 0; c < 32; ++c) chips[c] = c;

  const std::vector<PlatformFlow> flows{{0, 8, 0}, {8, 16, 0}, {16, 24, 0}, {24, 0, 0}, {3, 3, 0}};
  const std::string got = simgrid_routes(*topology, chips, std::vector<PlatformFlow>(flows.begin(), flows.end() - 1));
  EXPECT_EQ(got, expected_routes(*topology, std::vector<PlatformFlow>(flows.begin(), flows.end() - 1), 32));
  EXPECT_THAT(got, ::testing::HasSubstr("| 4e-06 | 5e+10 5e+10"));  // 4 us end to end, half on each NIC link
  // A flow from a chip to itself makes no route.
  EXPECT_THAT(simgrid_routes(*topology, chips, flows), ::testing::HasSubstr("hosts 32 links 4 routes 4"));
}

TEST(SimgridPlatform, HostsNeededCountsEachChipAndChannelOnce) {
  const std::vector<VertexId> chips = {0, 1, 2};
  const std::vector<PlatformFlow> flows = {{0, 1, 0}, {1, 0, 0}, {0, 1, 2}, {2, 5, 2}};
  // chip0, chip1, chip2 on channel 0; chip0, chip1, chip2, chip5 on channel 2.
  EXPECT_EQ(SimgridPlatform::hosts_needed(chips, flows), 7u);
}

TEST(SimgridPlatform, ActorStacksShrinkWithTheirNumberAndLoseGuardsPastTheMappingLimit) {
  EXPECT_EQ(actor_stacks_for(1000, 65530).stack_kib, 64u);
  EXPECT_TRUE(actor_stacks_for(1000, 65530).guard_page);
  EXPECT_EQ(actor_stacks_for(20000, 65530).stack_kib, 32u);
  EXPECT_TRUE(actor_stacks_for(20000, 65530).guard_page);  // 48,192 mappings
  EXPECT_FALSE(actor_stacks_for(30000, 65530).guard_page);  // 68,192
  EXPECT_TRUE(actor_stacks_for(30000, 262144).guard_page);
}

TEST(SimgridPlatform, MemoryIsTheRouteTableAndEachActorsStackGuardAndState) {
  const std::uint64_t table = 1024ull * 1024 * 8;
  EXPECT_EQ(simgrid_memory_bytes(1024, 0, {}, true), table);
  // Counted as an address-space limit counts it: every stack whole.
  EXPECT_EQ(simgrid_memory_bytes(1024, 10, {.stack_kib = 64, .guard_page = true}, true),
            table + 10 * ((64 + 12) * 1024ull + 4096));
  EXPECT_EQ(simgrid_memory_bytes(1024, 10, {.stack_kib = 32, .guard_page = false}, true), table + 10 * (32 + 12) * 1024ull);
  // Resident: only the 2 KiB of stack an actor touches, with a guard page or without.
  EXPECT_EQ(simgrid_memory_bytes(1024, 10, {.stack_kib = 64, .guard_page = true}, false), table + 10 * 14 * 1024ull);
  EXPECT_EQ(simgrid_memory_bytes(1024, 10, {.stack_kib = 32, .guard_page = false}, false), table + 10 * 14 * 1024ull);
}

}  // namespace
}  // namespace eppsim
