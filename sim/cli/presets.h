#pragma once
// What `eppsim presets` prints: the GPU presets (dense BF16, HBM, HBM
// bandwidth, NVLink), the model presets (shape and parameters) and the
// strategies.
#include <string>

namespace eppsim {

std::string presets_listing();

}  // namespace eppsim
