#pragma once
// A simple cluster: nodes of GPUs joined by an NVLink-like fabric, one NIC per
// GPU into a non-blocking network switch. Topologies richer than this plug in
// behind the same placement (node, local GPU) later.
#include <cstdint>

#include "models/gpu_spec.h"
#include "base/units.h"

namespace eppsim {

struct LinkParams {
  BytesPerSecond bandwidth;  // per direction
  Seconds latency;
};

struct ClusterSpec {
  std::uint32_t nodes = 0;
  std::uint32_t gpus_per_node = 0;
  GpuSpec gpu;
  LinkParams intra_node;
  LinkParams inter_node;

  std::uint32_t total_gpus() const { return nodes * gpus_per_node; }
  // Ranks are laid out node-major: rank r sits on node r / gpus_per_node.
  std::uint32_t node_of(std::uint32_t rank) const { return rank / gpus_per_node; }
  std::uint32_t local_gpu_of(std::uint32_t rank) const { return rank % gpus_per_node; }
};

}  // namespace eppsim
