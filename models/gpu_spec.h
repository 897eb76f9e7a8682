#pragma once
// GPU specifications and the built-in presets (vendor datasheet figures), with
// the per-GPU defaults of the shaped compute model (models/shaped_compute_cost.h;
// docs/cost-model.md lists each with its source).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/units.h"

namespace eppsim {

// What the shaped compute model needs to know of a GPU's kernels beyond its
// peak: published measurements, replaced by calibration when there is one.
struct ShapedKernelDefaults {
  Seconds kernel_launch;                     // fixed time of every kernel
  double gemm_tile_efficiency = 0.0;         // e_max: fraction of an SM's peak a full GEMM tile reaches
  double gemm_k_prologue = 0.0;              // k0: a tile's fill and epilogue, in elements of K
  double attention_efficiency = 0.0;         // FlashAttention's efficiency at long lengths
  double attention_half_length_tokens = 0.0; // mean attended length at which it reaches half of that
};

struct GpuSpec {
  std::string name;
  FlopsPerSecond peak_bf16;          // dense (no sparsity)
  Bytes memory;                      // HBM capacity (datasheet "N GB" read as N GiB)
  BytesPerSecond memory_bandwidth;   // HBM
  BytesPerSecond nvlink_bandwidth;   // per GPU, per direction
  std::uint32_t sm_count = 0;        // streaming multiprocessors; 0 for a custom GPU (no scenario field)
  ShapedKernelDefaults shaped;       // unset (zeros) for a custom GPU
  double price_usd = 0.0;            // one GPU, where a public price is known (gpu_spec.cpp); else 0
};

// A100-40GB, A100-80GB, A800-80GB, H100-SXM, H800-SXM, H200, B200, ... Sources are
// listed next to each entry in gpu_spec.cpp.
std::span<const GpuSpec> gpu_presets();
// Case-insensitive lookup, '_' read as '-'; nullptr when unknown.
const GpuSpec* find_gpu_preset(std::string_view name);
// The preset whose dense BF16 peak is nearest `peak` (by ratio; the first of
// equals in table order): where a custom GPU (cluster.gpu without a preset)
// takes its SM count and shaped defaults from, as the scenario has no field
// for them.
const GpuSpec& nearest_gpu_preset(FlopsPerSecond peak);

}  // namespace eppsim
