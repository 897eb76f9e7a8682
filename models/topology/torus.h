#pragma once
// A torus of chips (1, 2 or 3 dimensions, wrapping around in each; one
// dimension is a ring), optionally cut into optical blocks (TPUv4: 4x4x4 cubes
// joined by optical circuit switches).
//
// Chip c has coordinates x0 = c % d0, x1 = (c / d0) % d1, x2 = c / (d0 d1); a
// node is chips_per_node consecutive chips along the first dimension (so d0
// must be a multiple of it) and its fabric is the torus itself: a link whose
// ends share a node is marked intra_node. Every chip has links_per_neighbor
// parallel links to its + neighbour in each dimension of size >= 2 (the last
// one wrapping to 0; a dimension of size 2 thus joins its two chips by
// 2 x links_per_neighbor links, direct and wrap-around).
//
// Media: with optical_block B, the + link of a chip whose coordinate x_i has
// x_i % B_i == B_i - 1 leaves its block through the block's face and is an
// OpticalCircuit (one OCS port at each end; this includes the wrap-around of a
// single block, as in TPUv4); every other link is Electrical. Without blocks,
// all links are Electrical.
//
// Routing: dimension order (0, 1, 2), the shortest direction in each dimension
// (ties: positive), the parallel link picked per dimension by hashing the flow
// (ECMP), skipping failed parallel links; when a whole hop has failed, the
// generic BFS router finds a path around it.
//
// Bisection (closed form, exact for a cut through the largest dimension dmax):
// 2 * (chips / dmax) * links_per_neighbor * bandwidth (the wrap-around doubles
// the cut); zero when every dimension is 1.
#include <array>
#include <cstdint>
#include <vector>

#include "models/topology/topology.h"

namespace eppsim {

class TorusTopology final : public Topology {
 public:
  explicit TorusTopology(const TopologyConfig& config);

  std::string kind() const override { return "torus"; }
  void route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const override;
  BytesPerSecond injection_bandwidth_per_chip() const override { return live_injection_per_chip(); }
  BytesPerSecond bisection_bandwidth() const override;
  NetworkInventory inventory() const override;

  const TorusConfig& config() const { return config_; }
  std::uint32_t dimensions() const { return static_cast<std::uint32_t>(config_.dims.size()); }
  std::uint32_t coordinate(VertexId chip, std::uint32_t dim) const { return (chip / strides_[dim]) % config_.dims[dim]; }
  // The p-th parallel link from `chip` to its + neighbour in `dim`.
  LinkId plus_link(VertexId chip, std::uint32_t dim, std::uint32_t p) const {
    return dim_base_[dim] + chip * config_.links_per_neighbor + p;
  }
  // Hops of the dimension-order route.
  std::uint32_t hops(VertexId src, VertexId dst) const;

 private:
  TorusConfig config_;
  std::vector<std::uint32_t> strides_;
  std::vector<LinkId> dim_base_;
};

}  // namespace eppsim
