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
#include <vector>

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

// The factors of one class at one message size (schedule.proto's size_bytes
// of the op), as `eppsim calibrate` fits them per size of its rows.
struct InterferenceAtSize {
  double bytes = 0.0;
  InterferenceFactors factors;
};

// cost_model.interference resolved: whether the engines model it, and per
// class the factors as a function of the message size: points in increasing
// bytes (at least one); between two points, log(factor) linear in log(bytes)
// (a power law: where a message's time beside compute is floored, by a poll
// interval or a launch, its factor falls as 1 / bytes, which this follows and
// a factor linear in log(bytes) overshoots); constant before the first point
// and past the last, so a class of one point (the scenario's factors, a
// calibration without sizes, kDefaultInterference) is constant.
// Each factor: scenario, else calibration, else kDefaultInterference.
struct Interference {
  bool enabled = false;
  std::array<std::vector<InterferenceAtSize>, kTrafficClasses> by_size = {
      {{{0.0, kDefaultInterference[0]}}, {{0.0, kDefaultInterference[1]}}, {{0.0, kDefaultInterference[2]}}}};

  // The factors of class `c` for a message of `bytes`.
  InterferenceFactors at(TrafficClass c, double bytes) const;
  // Class `c` takes `factors` at every size.
  void set_constant(TrafficClass c, InterferenceFactors factors) {
    by_size[static_cast<std::size_t>(c)] = {InterferenceAtSize{0.0, factors}};
  }
};

}  // namespace eppsim
