#include "models/gpu_spec.h"
#include "models/preset_name.h"

#include <array>
#include <cctype>
#include <cmath>
#include <string>

namespace eppsim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The shaped compute model's kernel defaults (docs/cost-model.md, "Defaults"), the
// same for every preset: published measurements exist for H100 (GEMMs) and for
// FlashAttention on recent GPUs, not one set per part; calibration replaces them.
//   kernel_launch 5us: in XLA's measured H100 GEMM table (tensorflow/tensorflow,
//     third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h, sm_90) the
//     smallest GEMMs (256x512x256, 67 MFLOP) take 5.8us, of which the tile model
//     prices about 0.6us: about 5us is fixed per kernel.
//   gemm_tile_efficiency 0.9: the per-tile ceiling near 0.9 that NVIDIA's "Matrix
//     Multiplication Background" guide's tile-and-wave model needs to follow such
//     tables (the largest cuBLAS GEMMs reach 0.8-0.82 of peak there after wave
//     and prologue losses).
//   gemm_k_prologue 256: a tile fills a software pipeline of about four K-stages
//     of 64 before its first MMA (CUTLASS's multistage and Hopper mainloops) and
//     writes its output after the last: about 256 elements of K of lost time.
//   attention_efficiency 0.75, attention_half_length_tokens 650: e = e_max * L / (L + L0)
//     through FlashAttention's causal forward, head dimension 128 (Dao-AILab/
//     flash-attention PR #2605): 33% of peak at 1K tokens and 57% at 4K, with L the
//     mean attended length (N/2 for a causal sequence of N): 0.33 = e_max*512/(512+L0)
//     and 0.57 = e_max*2048/(2048+L0) give L0 = 655 and e_max = 0.752 (47% predicted
//     at 2K, 47% measured). FlashAttention-2 on A100 reaches 50-73% of peak (its
//     paper, arXiv 2307.08691), FlashAttention-3 on H100 61-63% at 2K-8K (PR #1075):
//     the same range.
ShapedKernelDefaults shaped_defaults() {
  return ShapedKernelDefaults{
      .kernel_launch = Seconds(5e-6),
      .gemm_tile_efficiency = 0.9,
      .gemm_k_prologue = 256.0,
      .attention_efficiency = 0.75,
      .attention_half_length_tokens = 650.0,
  };
}

// Figures are the SXM parts' dense (no sparsity) BF16 tensor-core peak, HBM capacity,
// HBM bandwidth and NVLink bandwidth. Datasheets quote NVLink as the total of both
// directions; `nvlink_bandwidth` is per direction, i.e. half of it.
//
// Capacity: the datasheets' "N GB" is taken as N GiB, which is what the driver
// reports for HBM, sized in powers of two (A100-80GB: 81920 MiB). H200 and B200 drivers
// report somewhat less than their figure (about 140 GiB and 179 GiB); we keep the
// datasheet figure for every part, consistently.
//
// SM counts: the architecture whitepapers (A100: 108 SMs in the "NVIDIA A100 Tensor
// Core GPU Architecture" whitepaper; H100 SXM5: 132 SMs in the "NVIDIA H100 Tensor
// Core GPU Architecture" whitepaper). A800 and H800 are the A100 and H100 SXM with
// less NVLink (their datasheets list the same BF16 peak), H200 is the same GH100
// configuration as H100 SXM with more HBM (same 989 TFLOPS), so they share those
// counts. B200: 148 SMs as the CUDA device query reports it (the datasheet lists
// none). Each count agrees with its peak: SMs x boost clock x dense BF16 FLOP per
// clock and SM (A100 108 x 1.41 GHz x 2048 = 312 T; H100 132 x 1.83 GHz x 4096 =
// 989 T; B200 148 x ~1.85 GHz x 8192 = 2.24 P).
//
// Prices (US dollars per GPU, the capital cost of a report, sim/cluster_cost.h):
// A100 class $10,000 ("Nvidia's A100 is the $10,000 chip powering the race for
// A.I.", CNBC, 2023-02-23); H100 class $27,500, the middle of the $25,000-30,000
// Raymond James estimated end customers pay (TechSpot, "Nvidia garners reported
// 1,000% profit on each H100 GPU", 2023-08). A800 and H800 are priced as the part
// they cut down. H200 and B200: no public per-GPU price, 0 (set
// cluster.capital.gpu_usd).
GpuSpec make(std::string name, double peak_tflops, double memory_gib, double hbm_gb_s, double nvlink_total_gb_s,
             std::uint32_t sm_count, double price_usd = 0.0) {
  return GpuSpec{
      .name = std::move(name),
      .peak_bf16 = FlopsPerSecond(peak_tflops * 1e12),
      .memory = Bytes(static_cast<std::uint64_t>(memory_gib * kGiB)),
      .memory_bandwidth = BytesPerSecond(hbm_gb_s * 1e9),
      .nvlink_bandwidth = BytesPerSecond(nvlink_total_gb_s * 1e9 / 2.0),
      .sm_count = sm_count,
      .shaped = shaped_defaults(),
      .price_usd = price_usd,
  };
}

const std::array<GpuSpec, 7>& presets() {
  static const std::array<GpuSpec, 7> table = {
      // NVIDIA A100 Tensor Core GPU datasheet (2021), A100 40GB SXM: BF16 312 TFLOPS
      // (624 with sparsity), 40GB HBM2, 1,555 GB/s, NVLink 600 GB/s.
      make("A100-40GB", 312, 40, 1555, 600, 108, 10000),
      // Same datasheet, A100 80GB SXM: BF16 312 TFLOPS, 80GB HBM2e, 2,039 GB/s, NVLink 600 GB/s.
      make("A100-80GB", 312, 80, 2039, 600, 108, 10000),
      // NVIDIA A800 datasheet, A800 80GB SXM: as the A100 80GB SXM but NVLink 400 GB/s.
      make("A800-80GB", 312, 80, 2039, 400, 108, 10000),
      // NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: BF16 1,979 TFLOPS with sparsity
      // (989 dense), 80GB HBM3, 3.35 TB/s, NVLink 900 GB/s.
      make("H100-SXM", 989, 80, 3350, 900, 132, 27500),
      // NVIDIA H800 SXM5 product brief: as the H100 SXM but NVLink 400 GB/s.
      make("H800-SXM", 989, 80, 3350, 400, 132, 27500),
      // NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: BF16 1,979 TFLOPS with sparsity
      // (989 dense), 141GB HBM3e, 4.8 TB/s, NVLink 900 GB/s.
      make("H200", 989, 141, 4800, 900, 132),
      // NVIDIA HGX B200 datasheet (8 GPUs): FP16/BF16 36 PFLOPS with sparsity (2.25 PFLOPS
      // dense per GPU), 1.4TB HBM3e (180GB per GPU), 64 TB/s (8 TB/s per GPU),
      // fifth-generation NVLink 1.8 TB/s per GPU.
      make("B200", 2250, 180, 8000, 1800, 148),
  };
  return table;
}


}  // namespace

std::span<const GpuSpec> gpu_presets() { return presets(); }

const GpuSpec* find_gpu_preset(std::string_view name) {
  const std::string key = normalize_preset_name(name);
  for (const GpuSpec& gpu : presets()) {
    if (normalize_preset_name(gpu.name) == key) return &gpu;
  }
  return nullptr;
}

const GpuSpec& nearest_gpu_preset(FlopsPerSecond peak) {
  const GpuSpec* best = &presets().front();
  double best_distance = std::abs(std::log(peak.value / best->peak_bf16.value));
  for (const GpuSpec& gpu : presets()) {
    const double distance = std::abs(std::log(peak.value / gpu.peak_bf16.value));
    if (distance < best_distance) {
      best = &gpu;
      best_distance = distance;
    }
  }
  return *best;
}

}  // namespace eppsim
