#include "models/gpu_spec.h"
#include "models/preset_name.h"

#include <array>
#include <cctype>
#include <string>

namespace eppsim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Figures are the SXM parts' dense (no sparsity) BF16 tensor-core peak, HBM capacity,
// HBM bandwidth and NVLink bandwidth. Datasheets quote NVLink as the total of both
// directions; `nvlink_bandwidth` is per direction, i.e. half of it.
//
// Capacity: the datasheets' "N GB" is taken as N GiB, which is what the driver
// reports for HBM, sized in powers of two (A100-80GB: 81920 MiB). H200 and B200 drivers
// report somewhat less than their figure (about 140 GiB and 179 GiB); we keep the
// datasheet figure for every part, consistently.
GpuSpec make(std::string name, double peak_tflops, double memory_gib, double hbm_gb_s, double nvlink_total_gb_s) {
  return GpuSpec{
      .name = std::move(name),
      .peak_bf16 = FlopsPerSecond(peak_tflops * 1e12),
      .memory = Bytes(static_cast<std::uint64_t>(memory_gib * kGiB)),
      .memory_bandwidth = BytesPerSecond(hbm_gb_s * 1e9),
      .nvlink_bandwidth = BytesPerSecond(nvlink_total_gb_s * 1e9 / 2.0),
  };
}

const std::array<GpuSpec, 7>& presets() {
  static const std::array<GpuSpec, 7> table = {
      // NVIDIA A100 Tensor Core GPU datasheet (2021), A100 40GB SXM: BF16 312 TFLOPS
      // (624 with sparsity), 40GB HBM2, 1,555 GB/s, NVLink 600 GB/s.
      make("A100-40GB", 312, 40, 1555, 600),
      // Same datasheet, A100 80GB SXM: BF16 312 TFLOPS, 80GB HBM2e, 2,039 GB/s, NVLink 600 GB/s.
      make("A100-80GB", 312, 80, 2039, 600),
      // NVIDIA A800 datasheet, A800 80GB SXM: as the A100 80GB SXM but NVLink 400 GB/s.
      make("A800-80GB", 312, 80, 2039, 400),
      // NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: BF16 1,979 TFLOPS with sparsity
      // (989 dense), 80GB HBM3, 3.35 TB/s, NVLink 900 GB/s.
      make("H100-SXM", 989, 80, 3350, 900),
      // NVIDIA H800 SXM5 product brief: as the H100 SXM but NVLink 400 GB/s.
      make("H800-SXM", 989, 80, 3350, 400),
      // NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: BF16 1,979 TFLOPS with sparsity
      // (989 dense), 141GB HBM3e, 4.8 TB/s, NVLink 900 GB/s.
      make("H200", 989, 141, 4800, 900),
      // NVIDIA HGX B200 datasheet (8 GPUs): FP16/BF16 36 PFLOPS with sparsity (2.25 PFLOPS
      // dense per GPU), 1.4TB HBM3e (180GB per GPU), 64 TB/s (8 TB/s per GPU),
      // fifth-generation NVLink 1.8 TB/s per GPU.
      make("B200", 2250, 180, 8000, 1800),
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

}  // namespace eppsim
