#pragma once
// Interference between compute and communication on one rank (scenario.proto's
// cost_model.interference; the engines' model is in sim/engine/analytic_engine.h):
// while a rank computes with communication of class c in flight, its compute
// runs at 1 / compute_slowdown(c); a communication activity with any of its
// ranks computing runs at 1 / comm_slowdown(its class). docs/interference.md
// has the user's view and the sources of the defaults below.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace eppsim {

// The classes of traffic (calibration.proto's InterferenceFit.traffic names them).
enum class TrafficClass : std::uint8_t { PointToPoint = 0, IntraNodeCollective = 1, InterNodeCollective = 2 };
inline constexpr std::size_t kTrafficClasses = 3;

constexpr std::string_view traffic_class_name(TrafficClass c) {
  constexpr std::string_view names[] = {"point-to-point", "intra-node-collective", "inter-node-collective"};
  return names[static_cast<std::size_t>(c)];
}

struct InterferenceFactors {
  double compute_slowdown = 1.0;  // >= 1
  double comm_slowdown = 1.0;     // >= 1
};

// The published defaults, per class (docs/interference.md, "Interference").
//   Compute beside an NVLink collective: 1.189, the average compute slowdown
//     measured beside NCCL collectives in GPT and LLaMA training on A100, H100,
//     MI250 and MI210 (arXiv 2507.03114); Calculon's NVLink processor usage
//     u = 0.15 (compute t / (1 - u) = 1.176) agrees within 1%.
//   Compute beside a network collective or a point-to-point transfer:
//     1 / (1 - 0.02) = 1.0204, Calculon's processor usage of InfiniBand
//     traffic: such kernels wait on the NIC and hold few SMs. Pipeline sends
//     (most point-to-point traffic) cross nodes in the shipped scenarios, so
//     they take the network's figure.
//   Communication beside compute: 1.0. No source separates it: the published
//     overlap figures (arXiv 2412.14335's 21% of the ideal overlap speedup)
//     measure the pair together, and charging both directions would count the
//     slowdown twice. `eppsim-bench interference` measures it.
inline constexpr std::array<InterferenceFactors, kTrafficClasses> kDefaultInterference = {{
    {1.0 / (1.0 - 0.02), 1.0},  // point-to-point
    {1.189, 1.0},               // intra-node collective (NVLink)
    {1.0 / (1.0 - 0.02), 1.0},  // inter-node collective (network)
}};

// cost_model.interference resolved: whether the engines model it, and the
// factors of each class (scenario, else calibration, else kDefaultInterference).
struct Interference {
  bool enabled = false;
  std::array<InterferenceFactors, kTrafficClasses> factors = kDefaultInterference;
  const InterferenceFactors& of(TrafficClass c) const { return factors[static_cast<std::size_t>(c)]; }
};

}  // namespace eppsim
