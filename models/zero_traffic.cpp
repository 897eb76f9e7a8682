#include "models/zero_traffic.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "models/errors.h"

namespace eppsim {
namespace {

Bytes whole_bytes(double bytes) {
  const double rounded = std::round(bytes);
  if (!(rounded >= 0.0 && rounded < 18446744073709551616.0)) {  // 2^64
    throw std::overflow_error(fmt::format("ZeRO traffic: {} bytes is out of range", bytes));
  }
  return Bytes(static_cast<std::uint64_t>(rounded));
}

// Ring algorithms: what each of d ranks sends for a collective of size_bytes `size`.
double ring_sent(ZeroCollectiveKind kind, double size, double d) {
  switch (kind) {
    case ZeroCollectiveKind::AllReduce: return 2.0 * (d - 1.0) / d * size;
    case ZeroCollectiveKind::ReduceScatter: return (d - 1.0) / d * size;
    case ZeroCollectiveKind::AllGather: return (d - 1.0) * size;
  }
  return 0.0;
}

}  // namespace

Bytes ZeroStepTraffic::sent_per_step() const {
  Bytes total;
  for (const ZeroCollective& c : collectives) total += c.sent * (c.per_micro_batch ? micro_batches : 1u);
  return total;
}

std::uint32_t ZeroStepTraffic::collectives_per_step() const {
  std::uint32_t n = 0;
  for (const ZeroCollective& c : collectives) n += c.per_micro_batch ? micro_batches : 1u;
  return n;
}

ZeroStepTraffic zero_step_traffic(double params, const ZeroTrafficOptions& options) {
  if (!(params >= 0.0) || !std::isfinite(params)) {
    throw InputError(fmt::format("ZeRO traffic: parameter count must be finite and >= 0, got {}", params));
  }
  if (options.stage > 3) throw InputError(fmt::format("ZeRO traffic: stage must be 0..3, got {}", options.stage));
  if (options.data_parallel == 0) throw InputError("ZeRO traffic: data_parallel must be >= 1, got 0");
  if (options.micro_batches == 0) throw InputError("ZeRO traffic: micro_batches must be >= 1, got 0");
  for (const double b : {options.weight_bytes_per_param, options.gradient_bytes_per_param}) {
    if (!(b > 0.0) || !std::isfinite(b)) {
      throw InputError(fmt::format("ZeRO traffic: bytes per parameter must be finite and > 0, got {}", b));
    }
  }
  ZeroStepTraffic traffic;
  traffic.micro_batches = options.micro_batches;
  const double d = options.data_parallel;
  const double gradients = params * options.gradient_bytes_per_param;
  const double weights = params * options.weight_bytes_per_param;
  if (options.data_parallel == 1) return traffic;  // nothing sharded, nothing to move
  if (options.stage == 3) traffic.gathered_weights = whole_bytes(weights);

  auto add = [&](ZeroCollectiveKind kind, ZeroPhase phase, std::string_view tensor, bool per_micro_batch,
                 double size) {
    traffic.collectives.push_back(
        ZeroCollective{kind, phase, tensor, per_micro_batch, whole_bytes(size), whole_bytes(ring_sent(kind, size, d))});
  };
  using K = ZeroCollectiveKind;
  using P = ZeroPhase;
  switch (options.stage) {
    case 0:
      add(K::AllReduce, P::AfterBackward, "gradients", false, gradients);
      break;
    case 1:
      add(K::ReduceScatter, P::AfterBackward, "gradients", false, gradients);
      add(K::AllGather, P::AfterOptimizer, "weights", false, weights / d);
      break;
    case 2:
      add(K::ReduceScatter, P::AfterBackward, "gradients", true, gradients);
      add(K::AllGather, P::AfterOptimizer, "weights", false, weights / d);
      break;
    default:
      add(K::AllGather, P::BeforeForward, "weights", true, weights / d);
      if (options.zero3_gather == Zero3Gather::ForwardAndBackward) {
        add(K::AllGather, P::BeforeBackward, "weights", true, weights / d);
      }
      add(K::ReduceScatter, P::AfterBackward, "gradients", true, gradients);
      break;
  }
  return traffic;
}

}  // namespace eppsim
