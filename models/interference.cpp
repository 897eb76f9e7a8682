#include "models/interference.h"

#include <cmath>

namespace eppsim {

InterferenceFactors Interference::at(TrafficClass c, double bytes) const {
  const std::vector<InterferenceAtSize>& points = by_size[static_cast<std::size_t>(c)];
  if (bytes <= points.front().bytes) return points.front().factors;
  if (bytes >= points.back().bytes) return points.back().factors;
  std::size_t hi = 1;
  while (points[hi].bytes < bytes) ++hi;
  const InterferenceAtSize& a = points[hi - 1];
  const InterferenceAtSize& b = points[hi];
  // Between two points both bytes are > 0 (the first point is below `bytes`, which is below the second).
  const double w = a.bytes > 0.0 ? std::log(bytes / a.bytes) / std::log(b.bytes / a.bytes) : 1.0;
  const auto between = [w](double x, double y) { return std::pow(x, 1.0 - w) * std::pow(y, w); };
  return {between(a.factors.compute_slowdown, b.factors.compute_slowdown),
          between(a.factors.comm_slowdown, b.factors.comm_slowdown)};
}

}  // namespace eppsim
