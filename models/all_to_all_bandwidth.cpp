#include "models/all_to_all_bandwidth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "base/errors.h"

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

bool AllToAllBandwidth::has_degree(std::uint32_t degree) const {
  if (degree < 2) return false;
  return std::any_of(table_.begin(), table_.end(), [&](const AllToAllPoint& p) { return p.degree == degree; });
}

AllToAllPoint AllToAllBandwidth::point(std::uint32_t degree) const {
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
  return table_gpus_per_node_ != 0 && degree > table_gpus_per_node_;
}

}  // namespace eppsim
