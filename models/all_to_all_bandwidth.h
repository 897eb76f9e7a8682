#pragma once
// The bandwidth of an all-to-all of degree d: how long one all-to-all takes when
// every GPU of a d-GPU group holds a `buffer` of bytes to scatter over the group.
//
// Convention (nccl-tests' algbw for alltoall): `buffer` is the per-GPU send
// buffer, the whole shard including the 1/d that stays on the GPU (this is
// schedule.proto's size_bytes for ALL_TO_ALL and FlexSP's all-to-all volume), and
//   time(d, buffer) = latency(d) + buffer / bandwidth(d)
//   bus_bandwidth(d) = bandwidth(d) * (d-1)/d     (the rate the wires actually carry)
// A degree-1 "all-to-all" moves nothing and takes no time.
//
// Two sources:
//   measured table  degree -> (bandwidth, latency), e.g. FlexSP's BW(d) (flexsp_preset.h).
//                   Lookup is exact: no interpolation or extrapolation between or
//                   beyond measured degrees (all-to-all bandwidth jumps by 10x where
//                   a group starts crossing nodes, so interpolating would mislead);
//                   an unlisted degree >= 2 throws InputError.
//   cluster-derived from a ClusterSpec, for every degree 2..total_gpus. Groups are
//                   node-aligned and compact (descending-degree placement, see
//                   flexsp.md section 2): d <= G (G = gpus_per_node) fits in one
//                   node, a larger group spans k = ceil(d/G) nodes, the least-filled
//                   of which holds g = d - (k-1)*G of its GPUs.
//     inside a node   each GPU sends (d-1)/d of its buffer over NVLink:
//                       transfer = (d-1)/d * buffer / B_nvlink
//     across nodes    a GPU on the least-filled node sends (g-1)/d of its buffer to
//                     node-mates over NVLink and (d-g)/d to other nodes through the
//                     NICs, which all G GPUs of the node share (every GPU is assumed
//                     busy with an all-to-all at once, as when all SP groups run
//                     together): per-GPU NIC rate B_nic = inter_node.bandwidth *
//                     nics_per_node / G. Both paths run concurrently:
//                       transfer = max((g-1)/d * buffer / B_nvlink, (d-g)/d * buffer / B_nic)
//     latency         (d-1) * alpha of the slowest link used (intra_node inside a
//                     node, inter_node across), as sim/engine's direct all-to-all.
//   B_nvlink is ClusterSpec::intra_node.bandwidth (per GPU, per direction) and
//   inter_node.bandwidth is one NIC's (per direction).
//   sim/engine's SimpleClusterNetwork prices a node-spanning all-to-all the same
//   way (for any placement, from the least-filled node).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "models/cluster_spec.h"
#include "models/units.h"

namespace eppsim {

// One measured degree.
struct AllToAllPoint {
  std::uint32_t degree = 0;    // >= 2
  BytesPerSecond bandwidth;    // algbw: per-GPU buffer / transfer time; > 0
  Seconds latency;             // fixed cost per all-to-all; >= 0
};

struct ClusterAllToAllOptions {
  // NICs per node shared by the node's GPUs; 0 means one per GPU (ClusterSpec's layout).
  std::uint32_t nics_per_node = 0;
};

class AllToAllBandwidth {
 public:
  // Throws InputError for an empty table, a degree < 2, a repeated degree, a
  // bandwidth not finite and > 0, or a latency not finite and >= 0. `gpus_per_node`
  // (0 = unknown) only serves crosses_nodes().
  static AllToAllBandwidth from_table(std::vector<AllToAllPoint> points, std::uint32_t gpus_per_node = 0);
  // Throws InputError for a cluster without nodes or GPUs, or a non-positive link bandwidth.
  static AllToAllBandwidth from_cluster(const ClusterSpec& cluster, ClusterAllToAllOptions options = {});

  // Whether `degree` has a bandwidth (degree 1 has none: it needs none).
  bool has_degree(std::uint32_t degree) const;
  // Throw InputError for a degree without one (listed in the message).
  BytesPerSecond bandwidth(std::uint32_t degree) const;
  BytesPerSecond bus_bandwidth(std::uint32_t degree) const;
  Seconds latency(std::uint32_t degree) const;
  // latency + buffer / bandwidth; zero for degree 1 (and for an empty buffer at any degree).
  Seconds time(std::uint32_t degree, Bytes buffer) const;
  // Whether a degree-d group spans more than one node (cluster-derived); for a
  // table, whether d exceeds `gpus_per_node` given at construction (0 = unknown: false).
  bool crosses_nodes(std::uint32_t degree) const;

  // The measured points, ascending by degree (empty for a cluster-derived model).
  std::span<const AllToAllPoint> table() const { return table_; }

 private:
  AllToAllBandwidth() = default;
  AllToAllPoint point(std::uint32_t degree) const;

  std::vector<AllToAllPoint> table_;  // sorted by degree
  std::optional<ClusterSpec> cluster_;
  std::uint32_t table_gpus_per_node_ = 0;
  double nic_Bps_per_gpu_ = 0.0;
};

}  // namespace eppsim
