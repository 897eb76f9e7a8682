#pragma once
// GPU specifications and the built-in presets (vendor datasheet figures).
#include <span>
#include <string>
#include <string_view>

#include "models/units.h"

namespace eppsim {

struct GpuSpec {
  std::string name;
  FlopsPerSecond peak_bf16;          // dense (no sparsity)
  Bytes memory;                      // HBM capacity (datasheet "N GB" read as N GiB)
  BytesPerSecond memory_bandwidth;   // HBM
  BytesPerSecond nvlink_bandwidth;   // per GPU, per direction
};

// A100-40GB, A100-80GB, A800-80GB, H100-SXM, H800-SXM, H200, B200, ... Sources are
// listed next to each entry in gpu_spec.cpp.
std::span<const GpuSpec> gpu_presets();
// Case-insensitive lookup, '_' read as '-'; nullptr when unknown.
const GpuSpec* find_gpu_preset(std::string_view name);

}  // namespace eppsim
