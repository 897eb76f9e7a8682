#pragma once
// Rail-optimized (NVIDIA SuperPOD style) and rail-only networks.
//
// Nodes form scalable units (SU) of scalable_unit_nodes consecutive nodes (the
// last one may be partial). Rail r is local chip r: every NIC of chip r of
// every node of SU s goes to leaf (rail r, SU s), numbered "leaf<r * SUs + s>"
// (rail-major), so a leaf uses scalable_unit_nodes * nics_per_chip of its down
// ports (down:up split as in fat_tree.h).
//
// Rail-optimized: one Clos (fat_tree.h's ClosFabric) over all leaves, shared
// by every rail: 2 levels when the radix reaches every leaf, else 3 levels
// whose pods are rail-aligned (each pod holds up to radix/2 leaves of a single
// rail, so same-rail traffic stays in its pod; cross-rail traffic crosses the
// core). Rail-only: one Clos per rail (rail r's leaves reach only rail r's
// spines, nothing when a rail has a single leaf); a flow to a chip on another
// rail first moves inside the source node to the source node's chip on the
// destination's rail, then crosses that rail.
//
// Vertices: chips, node switches, leaves, spines (all rails' spines, rail-major
// for rail-only), cores. Routing and ECMP as fat_tree.h. Bisection: half of
// min(NIC links, leaf up-links) per rail network (no leaf up-link limit for a
// network of a single leaf), summed; the node fabric lets rail-only traffic
// change rails, so its bisection sums the rails'.
#include <cstdint>
#include <vector>

#include "models/topology/fat_tree.h"
#include "models/topology/node_fabric.h"
#include "models/topology/topology.h"

namespace eppsim {

class RailOptimizedTopology final : public Topology {
 public:
  explicit RailOptimizedTopology(const TopologyConfig& config);

  std::string kind() const override { return config_.rail_only ? "rail-only" : "rail-optimized"; }
  void route(VertexId src, VertexId dst, std::uint64_t flow, std::vector<LinkId>* path) const override;
  BytesPerSecond injection_bandwidth_per_chip() const override { return live_injection_per_chip(); }
  BytesPerSecond bisection_bandwidth() const override;
  NetworkInventory inventory() const override;

  const RailOptimizedConfig& config() const { return config_; }
  const NodeFabric& node_fabric() const { return fabric_; }
  std::uint32_t rails() const { return chips_per_node(); }
  std::uint32_t scalable_units() const { return units_; }
  std::uint32_t leaves() const { return rails() * units_; }
  std::uint32_t leaf_of(VertexId chip) const { return (chip % chips_per_node()) * units_ + node_of(chip) / config_.scalable_unit_nodes; }
  LinkId nic_link(VertexId chip, std::uint32_t nic) const { return nic_base_ + chip * config_.nics_per_chip + nic; }
  // The Clos fabrics above the leaves: one (shared), or one per rail (rail-only).
  const std::vector<ClosFabric>& clos() const { return clos_; }

 private:
  bool route_rail(VertexId src, VertexId dst, std::uint64_t h, std::vector<LinkId>* path) const;

  RailOptimizedConfig config_;
  NodeFabric fabric_;
  std::vector<ClosFabric> clos_;
  std::uint32_t units_ = 0;
  std::uint32_t down_ = 0;
  std::uint32_t up_ = 0;
  VertexId first_leaf_ = 0;
  LinkId nic_base_ = 0;
};

}  // namespace eppsim
