#pragma once
// A measured all-to-all bandwidth table: how long one all-to-all of degree d
// takes when every GPU of a d-GPU group holds a `buffer` of bytes to scatter
// over the group, as a benchmark measured it (FlexSP's BW(d), flexsp_preset.h).
// The cost model's networks (network_time_model.h) price all-to-alls from the
// cluster's links; this table is for models that use measured figures instead.
//
// Convention (nccl-tests' algbw for alltoall): `buffer` is the per-GPU send
// buffer, the whole shard including the 1/d that stays on the GPU (this is
// schedule.proto's size_bytes for ALL_TO_ALL and FlexSP's all-to-all volume), and
//   time(d, buffer) = latency(d) + buffer / bandwidth(d)
//   bus_bandwidth(d) = bandwidth(d) * (d-1)/d     (the rate the wires actually carry)
// A degree-1 "all-to-all" moves nothing and takes no time.
// Lookup is exact: no interpolation or extrapolation between or beyond measured
// degrees (all-to-all bandwidth jumps by 10x where a group starts crossing
// nodes, so interpolating would mislead); an unlisted degree >= 2 throws InputError.
#include <cstdint>
#include <span>
#include <vector>

#include "base/units.h"

namespace eppsim {

// One measured degree.
struct AllToAllPoint {
  std::uint32_t degree = 0;    // >= 2
  BytesPerSecond bandwidth;    // algbw: per-GPU buffer / transfer time; > 0
  Seconds latency;             // fixed cost per all-to-all; >= 0
};

class AllToAllBandwidth {
 public:
  // Throws InputError for an empty table, a degree < 2, a repeated degree, a
  // bandwidth not finite and > 0, or a latency not finite and >= 0. `gpus_per_node`
  // (0 = unknown) only serves crosses_nodes().
  static AllToAllBandwidth from_table(std::vector<AllToAllPoint> points, std::uint32_t gpus_per_node = 0);

  // Whether `degree` has a bandwidth (degree 1 has none: it needs none).
  bool has_degree(std::uint32_t degree) const;
  // Throw InputError for a degree without one (listed in the message).
  BytesPerSecond bandwidth(std::uint32_t degree) const;
  BytesPerSecond bus_bandwidth(std::uint32_t degree) const;
  Seconds latency(std::uint32_t degree) const;
  // latency + buffer / bandwidth; zero for degree 1 (and for an empty buffer at any degree).
  Seconds time(std::uint32_t degree, Bytes buffer) const;
  // Whether d exceeds `gpus_per_node` given at construction (0 = unknown: false).
  bool crosses_nodes(std::uint32_t degree) const;

  // The measured points, ascending by degree.
  std::span<const AllToAllPoint> table() const { return table_; }

 private:
  AllToAllBandwidth() = default;
  AllToAllPoint point(std::uint32_t degree) const;

  std::vector<AllToAllPoint> table_;  // sorted by degree
  std::uint32_t table_gpus_per_node_ = 0;
};

}  // namespace eppsim
