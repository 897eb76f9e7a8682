#include "models/all_to_all_bandwidth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "models/errors.h"

namespace eppsim {
namespace {

std::string listed_degrees(std::span<const AllToAllPoint> table) {
  std::string out;
  for (const AllToAllPoint& p : table) {
    if (!out.empty()) out += ", ";
    out += std::to_string(p.degree);
  }
  return out;
}

void check_link(std::string_view what, const LinkParams& link) {
  if (!(link.bandwidth.value > 0.0) || !std::isfinite(link.bandwidth.value)) {
    throw InputError(fmt::format("all-to-all bandwidth: cluster {}.bandwidth must be finite and > 0, got {}", what,
                                 link.bandwidth.value));
  }
  if (!(link.latency.value >= 0.0) || !std::isfinite(link.latency.value)) {
    throw InputError(fmt::format("all-to-all bandwidth: cluster {}.latency must be finite and >= 0, got {}", what,
                                 link.latency.value));
  }
}

}  // namespace

AllToAllBandwidth AllToAllBandwidth::from_table(std::vector<AllToAllPoint> points, std::uint32_t gpus_per_node) {
  if (points.empty()) throw InputError("all-to-all bandwidth: the table needs at least one degree");
  std::sort(points.begin(), points.end(),
            [](const AllToAllPoint& a, const AllToAllPoint& b) { return a.degree < b.degree; });
  for (std::size_t i = 0; i < points.size(); ++i) {
    const AllToAllPoint& p = points[i];
    if (p.degree < 2) throw InputError(fmt::format("all-to-all bandwidth: degree must be >= 2, got {}", p.degree));
    if (i > 0 && points[i - 1].degree == p.degree) {
      throw InputError(fmt::format("all-to-all bandwidth: degree {} is listed twice", p.degree));
    }
    if (!(p.bandwidth.value > 0.0) || !std::isfinite(p.bandwidth.value)) {
      throw InputError(fmt::format("all-to-all bandwidth: degree {}: bandwidth must be finite and > 0, got {}",
                                   p.degree, p.bandwidth.value));
    }
    if (!(p.latency.value >= 0.0) || !std::isfinite(p.latency.value)) {
      throw InputError(fmt::format("all-to-all bandwidth: degree {}: latency must be finite and >= 0, got {}",
                                   p.degree, p.latency.value));
    }
  }
  AllToAllBandwidth model;
  model.table_ = std::move(points);
  model.table_gpus_per_node_ = gpus_per_node;
  return model;
}

AllToAllBandwidth AllToAllBandwidth::from_cluster(const ClusterSpec& cluster, ClusterAllToAllOptions options) {
  if (cluster.nodes == 0 || cluster.gpus_per_node == 0) {
    throw InputError(fmt::format("all-to-all bandwidth: cluster needs nodes and gpus_per_node >= 1, got {} and {}",
                                 cluster.nodes, cluster.gpus_per_node));
  }
  check_link("intra_node", cluster.intra_node);
  check_link("inter_node", cluster.inter_node);
  const std::uint32_t nics = options.nics_per_node == 0 ? cluster.gpus_per_node : options.nics_per_node;
  AllToAllBandwidth model;
  model.cluster_ = cluster;
  model.nic_Bps_per_gpu_ = cluster.inter_node.bandwidth.value * nics / cluster.gpus_per_node;
  return model;
}

bool AllToAllBandwidth::has_degree(std::uint32_t degree) const {
  if (degree < 2) return false;
  if (cluster_) return degree <= cluster_->total_gpus();
  return std::any_of(table_.begin(), table_.end(), [&](const AllToAllPoint& p) { return p.degree == degree; });
}

AllToAllPoint AllToAllBandwidth::point(std::uint32_t degree) const {
  if (cluster_) {
    const ClusterSpec& c = *cluster_;
    if (degree < 2 || degree > c.total_gpus()) {
      throw InputError(fmt::format("all-to-all bandwidth: degree must be in [2, {}] on a cluster of {} GPUs, got {}",
                                   c.total_gpus(), c.total_gpus(), degree));
    }
    const double d = degree;
    const double nvlink = c.intra_node.bandwidth.value;
    if (degree <= c.gpus_per_node) {
      return AllToAllPoint{degree, BytesPerSecond(nvlink * d / (d - 1.0)), c.intra_node.latency * (d - 1.0)};
    }
    const std::uint32_t nodes = (degree + c.gpus_per_node - 1) / c.gpus_per_node;
    const double g = degree - (nodes - 1) * c.gpus_per_node;  // GPUs on the least-filled node
    // Transfer time per byte of buffer: the slower of the NVLink and NIC paths.
    const double s_per_byte = std::max((g - 1.0) / d / nvlink, (d - g) / d / nic_Bps_per_gpu_);
    return AllToAllPoint{degree, BytesPerSecond(1.0 / s_per_byte), c.inter_node.latency * (d - 1.0)};
  }
  for (const AllToAllPoint& p : table_) {
    if (p.degree == degree) return p;
  }
  throw InputError(fmt::format("all-to-all bandwidth: no measurement for degree {} (measured: {}); degrees are "
                               "looked up exactly, not interpolated",
                               degree, listed_degrees(table_)));
}

BytesPerSecond AllToAllBandwidth::bandwidth(std::uint32_t degree) const { return point(degree).bandwidth; }

BytesPerSecond AllToAllBandwidth::bus_bandwidth(std::uint32_t degree) const {
  const double d = degree;
  return BytesPerSecond(point(degree).bandwidth.value * (d - 1.0) / d);
}

Seconds AllToAllBandwidth::latency(std::uint32_t degree) const { return point(degree).latency; }

Seconds AllToAllBandwidth::time(std::uint32_t degree, Bytes buffer) const {
  if (degree == 0) throw InputError("all-to-all bandwidth: degree must be >= 1, got 0");
  if (degree == 1 || buffer.count == 0) return Seconds(0.0);
  const AllToAllPoint p = point(degree);
  return p.latency + transfer_time(buffer, p.bandwidth);
}

bool AllToAllBandwidth::crosses_nodes(std::uint32_t degree) const {
  if (cluster_) return degree > cluster_->gpus_per_node;
  return table_gpus_per_node_ != 0 && degree > table_gpus_per_node_;
}

}  // namespace eppsim
