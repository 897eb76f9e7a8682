#include "models/network/calibrated_network.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "models/cluster_cost_model.h"

namespace eppsim {
Seconds fitted_time(const CommFit& fit, Bytes size) {
  return fit.latency + Seconds(bus_bytes(fit.kind, fit.group_size, static_cast<double>(size.count)) / fit.bus_bandwidth.value);
}

CalibratedNetwork::CalibratedNetwork(std::vector<CommFit> fits, std::shared_ptr<const NetworkTimeModel> fallback,
                                     std::vector<std::uint32_t> node_of_rank)
    : fits_(std::move(fits)), fallback_(std::move(fallback)), node_of_rank_(std::move(node_of_rank)) {
  if (!fallback_) throw std::invalid_argument("CalibratedNetwork: needs a network to fall back on");
  for (std::size_t i = 0; i < fits_.size(); ++i) {
    const CommFit& f = fits_[i];
    const auto name = comm_kind_name(f.kind);
    if (f.group_size < 2) throw std::invalid_argument(fmt::format("CalibratedNetwork: {} fit over {} ranks", name, f.group_size));
    if (!(f.latency.value >= 0.0) || !std::isfinite(f.latency.value))
      throw std::invalid_argument(fmt::format("CalibratedNetwork: {} fit with latency {} s", name, f.latency.value));
    if (!(f.bus_bandwidth.value > 0.0) || !std::isfinite(f.bus_bandwidth.value))
      throw std::invalid_argument(fmt::format("CalibratedNetwork: {} fit with bandwidth {} B/s", name, f.bus_bandwidth.value));
    for (std::size_t j = 0; j < i; ++j) {
      if (fits_[j].kind == f.kind && fits_[j].group_size == f.group_size && fits_[j].crosses_nodes == f.crosses_nodes)
        throw std::invalid_argument(fmt::format("CalibratedNetwork: two {} fits over {} ranks", name, f.group_size));
    }
  }
}

const CommFit* CalibratedNetwork::find(CommKind kind, std::uint32_t group_size, bool crosses_nodes) const {
  for (const CommFit& f : fits_) {
    if (f.kind == kind && f.group_size == group_size && f.crosses_nodes == crosses_nodes) return &f;
  }
  return nullptr;
}

const CommFit* CalibratedNetwork::fit_for_p2p(std::uint32_t src_rank, std::uint32_t dst_rank) const {
  if (src_rank == dst_rank) return nullptr;
  return find(CommKind::SendRecv, 2, node_of_rank_.at(src_rank) != node_of_rank_.at(dst_rank));
}

const CommFit* CalibratedNetwork::fit_for(CommKind kind, std::span<const std::uint32_t> ranks) const {
  if (ranks.size() < 2) return nullptr;
  const std::uint32_t first_node = node_of_rank_.at(ranks.front());
  const bool crosses =
      std::any_of(ranks.begin(), ranks.end(), [&](std::uint32_t r) { return node_of_rank_.at(r) != first_node; });
  return find(kind, static_cast<std::uint32_t>(ranks.size()), crosses);
}

bool CalibratedNetwork::fitted_p2p(std::uint32_t src_rank, std::uint32_t dst_rank) const {
  return fit_for_p2p(src_rank, dst_rank) != nullptr;
}

bool CalibratedNetwork::fitted_collective(CommKind kind, std::span<const std::uint32_t> ranks) const {
  return fit_for(kind, ranks) != nullptr;
}

Seconds CalibratedNetwork::p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const {
  if (src_rank == dst_rank) return Seconds(0.0);
  if (const CommFit* fit = fit_for_p2p(src_rank, dst_rank)) return fitted_time(*fit, size);
  return fallback_->p2p_time(src_rank, dst_rank, size);
}

Seconds CalibratedNetwork::collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                                           std::span<const std::uint32_t> ranks, Bytes size) const {
  if (ranks.size() < 2) return Seconds(0.0);
  if (const CommFit* fit = fit_for(kind, ranks)) return fitted_time(*fit, size);
  return fallback_->collective_time(kind, algorithm, ranks, size);
}


}  // namespace eppsim
