#pragma once
// Communication priced by fits measured on real hardware (`eppsim calibrate`
// from `eppsim-bench comm`), falling back to an analytic model where no fit
// applies.
//
// A fit covers one kind of communication over one group size, inside a node or
// across nodes:  time = latency + bus_bytes / bus_bandwidth,  with bus_bytes
// the data each rank moves as nccl-tests counts it (models/comm_kind.h).
// CalibratedNetwork prices a message or a collective by the fit of the same
// kind, group size and node-crossing when there is one (whatever the
// algorithm hint: the fit measured what the library chose), and otherwise asks
// the model it wraps.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "models/cost_model.h"
#include "models/comm_kind.h"
#include "models/network_time_model.h"
#include "base/units.h"

namespace eppsim {

struct CommFit {
  CommKind kind = CommKind::SendRecv;
  std::uint32_t group_size = 2;
  bool crosses_nodes = false;
  Seconds latency;
  BytesPerSecond bus_bandwidth;
};

// latency + bus_bytes(kind, group_size, size) / bus_bandwidth.
Seconds fitted_time(const CommFit& fit, Bytes size);

class CalibratedNetwork final : public NetworkTimeModel {
 public:
  // `node_of_rank[r]` is rank r's node (a group crosses nodes when its ranks'
  // nodes differ). Throws std::invalid_argument for two fits of the same kind,
  // group size and node-crossing, a group size below 2, a negative or
  // non-finite latency, or a bandwidth that is not positive and finite
  // (scenario loading checks these first and names the fields).
  CalibratedNetwork(std::vector<CommFit> fits, std::shared_ptr<const NetworkTimeModel> fallback,
                    std::vector<std::uint32_t> node_of_rank);

  Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const override;
  Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm,
                          std::span<const std::uint32_t> ranks, Bytes size) const override;
  // The wrapped model's (a fitted collective has no steps of its own).
  CollectiveRoute collective_route(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                                   Bytes size) const override {
    return fallback_->collective_route(kind, algorithm, ranks, size);
  }

  // The fit that prices (kind, group_size, crosses_nodes); null when none does.
  const CommFit* find(CommKind kind, std::uint32_t group_size, bool crosses_nodes) const;
  // Whether a fit prices this message / this collective (else the wrapped model does).
  bool fitted_p2p(std::uint32_t src_rank, std::uint32_t dst_rank) const override;
  bool fitted_collective(CommKind kind, std::span<const std::uint32_t> ranks) const override;

 private:
  const CommFit* fit_for_p2p(std::uint32_t src_rank, std::uint32_t dst_rank) const;
  const CommFit* fit_for(CommKind kind, std::span<const std::uint32_t> ranks) const;

  std::vector<CommFit> fits_;
  std::shared_ptr<const NetworkTimeModel> fallback_;
  std::vector<std::uint32_t> node_of_rank_;
};

}  // namespace eppsim
