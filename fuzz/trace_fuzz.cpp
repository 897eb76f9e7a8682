// libFuzzer target: see fuzz/fuzz_entries.h (trace_input).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  eppsim::fuzz::trace_input(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
