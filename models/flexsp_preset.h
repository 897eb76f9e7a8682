#pragma once
// FlexSP's cost model and constants (flexsp.md section 1.1), as a preset, so that
// the flexsp planner can use exactly the paper's model when a scenario names it
// (cost_model.flexsp_preset): FlexSpPresetCost is that model as a CostModel,
// which the planner's estimator (sim/plan/plan_estimate.h) prices with. SI units
// throughout.
//
//   T_cmp(s,d) = (alpha1*s^2 + alpha2*s) / d
//   T_a2a(s,d) = [4 * 2 * L * h * s * 2 bytes / d] / BW(d)    (0 for d = 1; FlexSP
//                leaves out the (d-1)/d factor and any latency)
//   T_p        = sum over the group's sequences of (T_cmp + T_a2a) + beta1
//   MS         = params * 16 bytes / N                         (ZeRO-3 over all N GPUs)
//   C          = floor((memory cap - MS) / gamma)              tokens per GPU; C*d per group
//
// Units. FlexSP's code works in ms and MB; we convert: alpha1 ms/tok^2 -> s/tok^2
// (x1e-3), alpha2 ms/tok -> s/tok, beta1 ms -> s; its MB and GB are binary
// (MB = 2^20 bytes, the 28 GB cap = 28 * 2^30 bytes, gamma MB/token = 2^20
// bytes/token; its parameter counts "7.12B" are 7.12 * 2^30). Its BW(d) "GB/s"
// divides a volume in MB to give ms, so one unit is 2^20 bytes per ms =
// 1.048576e9 B/s (kFlexSpBandwidthUnit_Bps); with that the paper's worked numbers
// come out (64K at d=16: 8192 MB / 10.33 = 793 ms).
// BW(d) is measured for d in {2, 4, 8, 16, 32, 64} on 8 nodes of 8 A100-class GPUs
// (d <= 8 NVLink, d >= 16 two InfiniBand HCAs per node); other degrees throw.
#include <cstdint>
#include <span>
#include <string_view>

#include "base/units.h"
#include "models/all_to_all_bandwidth.h"
#include "models/cost_model.h"

namespace eppsim {

inline constexpr double kFlexSpBandwidthUnit_Bps = 1048576.0 * 1000.0;  // 2^20 bytes per ms
inline constexpr std::uint32_t kFlexSpGpusPerNode = 8;

// Which parameter count applies: FlexSP's learned position embeddings grow with
// the maximum sequence length (192K or 384K).
enum class FlexSpMaxLength { K192, K384 };

struct FlexSpModel {
  std::string_view name;          // "gpt-7b", "gpt-13b", "gpt-30b"
  std::string_view model_preset;  // the TransformerSpec preset of its shape
  std::uint32_t layers = 0;
  std::uint32_t hidden_size = 0;
  double alpha1_s_per_token2 = 0.0;
  double alpha2_s_per_token = 0.0;
  Seconds beta1;                       // once per group and micro-batch
  double gamma_bytes_per_token = 0.0;  // activations per token (gpt-7b: measured at N = 32/64;
                                       // 2.669 MB at N = 16, where less is recomputed)
  double params_192k = 0.0;            // parameter counts
  double params_384k = 0.0;

  double params(FlexSpMaxLength max_length) const {
    return max_length == FlexSpMaxLength::K192 ? params_192k : params_384k;
  }
};

// gpt-7b, gpt-13b, gpt-30b.
std::span<const FlexSpModel> flexsp_models();
// Case-insensitive, '_' read as '-'; also by the TransformerSpec preset name
// ("gpt-6.7b"). nullptr when unknown.
const FlexSpModel* find_flexsp_model(std::string_view name);
// The measured BW(d) table (latency 0; gpus_per_node 8 for crosses_nodes()).
const AllToAllBandwidth& flexsp_all_to_all_bandwidth();
// 28 GiB, the runtime cap (the solver scripts use 30).
inline constexpr Bytes kFlexSpMemoryCap{28ull << 30};

// FlexSP's model as a cost model, over the scenario's `fallback` for what the
// paper does not model:
//   compute_cost    T_cmp of the work's segments (a segment of t tokens after
//                   c of context: alpha1 ((c+t)^2 - c^2) + alpha2 t), for its
//                   share of the layers, / shards; FlexSP measures forward and
//                   backward together, split here 1:2 (a recompute as a
//                   forward). The attention part takes the alpha1 term, the
//                   parts before and after it half the alpha2 term each. FLOPs
//                   and traffic are the fallback's.
//   all-to-all      buffer / BW(d), d the group size: no latency and no (d-1)/d,
//                   as FlexSP's T_a2a (InputError for a degree the table lacks)
//   the rest        (messages, other collectives, how each runs, optimizer
//                   steps) the fallback's.
// Summed over a sequence's passes and layers as the planner's estimator sums
// them (2 passes x L layers x the Ulysses exchanges of 4 h s / d elements), an
// MHA model gives T_cmp + T_a2a; the fallback must outlive it.
class FlexSpPresetCost final : public CostModel {
 public:
  FlexSpPresetCost(const FlexSpModel& model, const CostModel& fallback,
                   const AllToAllBandwidth& bandwidth = flexsp_all_to_all_bandwidth());

  ComputeCost compute_cost(const ComputeWork& work) const override;
  Seconds optimizer_time(Bytes memory_traffic) const override { return fallback_.optimizer_time(memory_traffic); }
  const NetworkTimeModel& network() const override { return network_; }

 private:
  class Network final : public NetworkTimeModel {
   public:
    Network(const NetworkTimeModel& fallback, const AllToAllBandwidth& bandwidth)
        : fallback_(fallback), bandwidth_(bandwidth) {}
    Seconds p2p_time(std::uint32_t src_rank, std::uint32_t dst_rank, Bytes size) const override {
      return fallback_.p2p_time(src_rank, dst_rank, size);
    }
    Seconds collective_time(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                            Bytes size) const override;
    CollectiveRoute collective_route(CommKind kind, CollectiveAlgorithm algorithm, std::span<const std::uint32_t> ranks,
                                     Bytes size) const override {
      return fallback_.collective_route(kind, algorithm, ranks, size);
    }

   private:
    const NetworkTimeModel& fallback_;
    const AllToAllBandwidth& bandwidth_;
  };

  const FlexSpModel& model_;
  const CostModel& fallback_;
  Network network_;
};

// ZeRO-3 model states per GPU over `cluster_gpus` GPUs: params * 16 / N
// (memory_model.h's model_state_bytes, stage 3).
Bytes flexsp_model_state_bytes(const FlexSpModel& model, FlexSpMaxLength max_length, std::uint32_t cluster_gpus);
// C, the activation capacity in tokens per GPU; 0 when the model states alone
// exceed the cap.
std::uint64_t flexsp_token_capacity(const FlexSpModel& model, FlexSpMaxLength max_length, std::uint32_t cluster_gpus,
                                    Bytes memory_cap = kFlexSpMemoryCap);
// FlexSP's minimum degree for a sequence: the smallest power of two d with
// d * capacity >= tokens (1 for an empty sequence; FlexSP itself never uses 1).
// Throws InputError for a zero capacity and a non-empty sequence.
std::uint32_t flexsp_min_degree(std::uint64_t tokens, std::uint64_t capacity);

}  // namespace eppsim
