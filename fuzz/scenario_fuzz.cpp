// libFuzzer target: see fuzz/fuzz_entries.h (scenario_input).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

#include "fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);  // its parse warnings would bury the fuzzer's own output
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  eppsim::fuzz::scenario_input(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
