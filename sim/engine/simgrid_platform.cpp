#include "sim/engine/simgrid_platform.h"

#include <algorithm>
#include <string>
#include <tuple>

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

sg4::Engine& start_simgrid_engine() {
  static char name[] = "eppsim";
  static char log[] = "--log=root.thres:warning";
#if defined(EPPSIM_ADDRESS_SANITIZER)
  // SimGrid's default contexts switch stacks by hand, which AddressSanitizer
  // cannot follow (an exception unwinding an actor's stack is reported as an
  // overflow); under the sanitizer every actor runs on a thread of its own.
  // The factory is chosen when the Engine starts, so it goes on the command line.
  static char factory[] = "--cfg=contexts/factory:thread";
  static char* argv[] = {name, log, factory, nullptr};
  static int argc = 3;
#else
  static char* argv[] = {name, log, nullptr};
  static int argc = 2;
#endif
  // Never destroyed: the process (a forked child) ends with _exit.
  auto* engine = new sg4::Engine(&argc, argv);
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

sg4::SplitDuplexLink* SimgridPlatform::link(LinkId id) const {
  const auto it = links_.find(id);
  return it == links_.end() ? nullptr : it->second;
}

sg4::Host* SimgridPlatform::host(VertexId chip, std::uint32_t channel) const {
  return hosts_.at(host_key(chip, channel));
}

}  // namespace eppsim
