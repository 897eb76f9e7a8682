#include "sim/engine/simgrid_platform.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include "models/topology/topology.h"

namespace eppsim {
namespace {

namespace sg4 = simgrid::s4u;

constexpr double kHostSpeed_flops = 1e15;  // unused: compute ops sleep for their cost-model duration

std::uint64_t host_key(VertexId chip, std::uint32_t channel) { return static_cast<std::uint64_t>(chip) << 8 | channel; }

}  // namespace

// GCC says that AddressSanitizer is on with a macro, clang (14) through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define EPPSIM_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EPPSIM_ADDRESS_SANITIZER 1
#endif
#endif

ActorStacks actor_stacks_for(std::size_t actors, std::uint64_t max_map_count) {
  constexpr std::size_t kManyActors = 16384;
  constexpr std::uint64_t kOtherMappings = 8192;
  return ActorStacks{.stack_kib = actors > kManyActors ? 32u : 64u,
                     .guard_page = 2 * static_cast<std::uint64_t>(actors) + kOtherMappings <= max_map_count};
}

std::uint64_t max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::uint64_t count = 0;
  return in >> count && count > 0 ? count : 65530;
}

std::uint64_t simgrid_memory_bytes(std::size_t hosts, std::size_t actors, ActorStacks stacks, bool address_space) {
  constexpr std::uint64_t kActorStateBytes = 12 << 10, kPageBytes = 4096, kTouchedStackBytes = 2 << 10;
  const auto h = static_cast<std::uint64_t>(hosts);
  const std::uint64_t stack = address_space ? static_cast<std::uint64_t>(stacks.stack_kib) * 1024 +
                                                  (stacks.guard_page ? kPageBytes : 0)
                                            : kTouchedStackBytes;
  return h * h * sizeof(void*) + static_cast<std::uint64_t>(actors) * (stack + kActorStateBytes);
}

sg4::Engine& start_simgrid_engine(ActorStacks stacks) {
  // The command line SimGrid reads its context settings from: they are fixed
  // when the Engine starts. Static: the engine keeps pointers into it.
  static std::vector<std::string> args;
  args = {"eppsim", "--log=root.thres:warning", fmt::format("--cfg=contexts/stack-size:{}", stacks.stack_kib),
          fmt::format("--cfg=contexts/guard-size:{}", stacks.guard_page ? 1 : 0)};
#if defined(EPPSIM_ADDRESS_SANITIZER)
  // SimGrid's default contexts switch stacks by hand, which AddressSanitizer
  // cannot follow (an exception unwinding an actor's stack is reported as an
  // overflow); under the sanitizer every actor runs on a thread of its own.
  args.push_back("--cfg=contexts/factory:thread");
#endif
  static std::vector<char*> argv;
  argv.clear();
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  static int argc = 0;
  argc = static_cast<int>(args.size());
  // Never destroyed: the process (a forked child) ends with _exit.
  auto* engine = new sg4::Engine(&argc, argv.data());
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic", false);
  sg4::Engine::set_config("network/TCP-gamma", 0.0);
  return *engine;
}

SimgridPlatform::SimgridPlatform(const Topology& topology, std::span<const VertexId> chips,
                                 std::span<const PlatformFlow> flows) {
  auto* zone = sg4::create_full_zone("eppsim");
  auto add_host = [&](VertexId chip, std::uint32_t channel) {
    auto [it, added] = hosts_.try_emplace(host_key(chip, channel), nullptr);
    if (added) {
      const std::string name = channel == 0 ? topology.vertex_name(chip)
                                            : fmt::format("{}#{}", topology.vertex_name(chip), channel);
      it->second = zone->create_host(name, kHostSpeed_flops);
    }
    return it->second;
  };
  for (VertexId chip : chips) add_host(chip, 0);

  std::vector<PlatformFlow> unique(flows.begin(), flows.end());
  std::sort(unique.begin(), unique.end(), [](const PlatformFlow& a, const PlatformFlow& b) {
    return std::tie(a.src, a.dst, a.channel) < std::tie(b.src, b.dst, b.channel);
  });
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());

  using Direction = sg4::LinkInRoute::Direction;
  auto& links = links_;
  std::vector<LinkId> path;
  std::vector<sg4::LinkInRoute> route;
  for (const PlatformFlow& f : unique) {
    auto* src = add_host(f.src, f.channel);
    auto* dst = add_host(f.dst, f.channel);
    if (f.src == f.dst) continue;  // no traffic on the network
    path.clear();
    topology.route(f.src, f.dst, channel_flow_hash(f.src, f.dst, f.channel), &path);
    route.clear();
    VertexId at = f.src;
    for (LinkId id : path) {
      const Link& l = topology.link(id);
      auto [it, added] = links.try_emplace(id, nullptr);
      if (added) {
        it->second = zone->create_split_duplex_link(fmt::format("link{}", id), l.bandwidth.value);
        it->second->set_latency(l.latency.value)->seal();
      }
      const bool forward = l.a == at;
      route.emplace_back(it->second, forward ? Direction::UP : Direction::DOWN);
      at = forward ? l.b : l.a;
    }
    zone->add_route(src->get_netpoint(), dst->get_netpoint(), nullptr, nullptr, route, false);
    ++routes_built_;
  }
  links_built_ = links.size();
  zone->seal();
}

std::size_t SimgridPlatform::hosts_needed(std::span<const VertexId> chips, std::span<const PlatformFlow> flows) {
  std::vector<std::uint64_t> keys;
  keys.reserve(chips.size() + 2 * flows.size());
  for (VertexId chip : chips) keys.push_back(host_key(chip, 0));
  for (const PlatformFlow& f : flows) {
    keys.push_back(host_key(f.src, f.channel));
    keys.push_back(host_key(f.dst, f.channel));
  }
  std::sort(keys.begin(), keys.end());
  return static_cast<std::size_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
}

sg4::SplitDuplexLink* SimgridPlatform::link(LinkId id) const {
  const auto it = links_.find(id);
  return it == links_.end() ? nullptr : it->second;
}

std::optional<LinkId> SimgridPlatform::slowest_link_in_use() const {
  std::optional<LinkId> found;
  double slowest_Bps = 0.0;
  for (const auto& [id, link] : links_) {
    for (const sg4::Link* direction : {link->get_link_up(), link->get_link_down()}) {
      if (!direction->is_used()) continue;
      const double bandwidth_Bps = direction->get_bandwidth();
      if (!found || bandwidth_Bps < slowest_Bps || (bandwidth_Bps == slowest_Bps && id < *found)) {
        found = id;
        slowest_Bps = bandwidth_Bps;
      }
    }
  }
  return found;
}

sg4::Host* SimgridPlatform::host(VertexId chip, std::uint32_t channel) const {
  return hosts_.at(host_key(chip, channel));
}

}  // namespace eppsim
