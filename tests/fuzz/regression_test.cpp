// Replays tests/fuzz/regressions/TARGET/* through the fuzz targets' entry
// functions: each input must end normally or in an InputError (which the
// entry function catches); a crash or any other exception fails the test, and
// the sanitizer builds catch memory errors and undefined behaviour.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/fuzz_entries.h"
#include "base/proto_io.h"

namespace eppsim::fuzz {
namespace {

void replay(const std::string& target, const std::function<void(std::string_view)>& entry) {
  const auto dir = std::filesystem::path(EPPSIM_SOURCE_DIR) / "tests/fuzz/regressions" / target;
  std::vector<std::filesystem::path> inputs;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& file : std::filesystem::directory_iterator(dir)) {
      if (file.is_regular_file() && file.path().filename() != "README.md") inputs.push_back(file.path());
    }
  }
  std::sort(inputs.begin(), inputs.end());
  for (const auto& input : inputs) {
    SCOPED_TRACE(input.string());
    EXPECT_NO_THROW(entry(read_file(input)));
  }
}

TEST(FuzzRegression, Scenario) { replay("scenario", scenario_input); }
TEST(FuzzRegression, Schedule) { replay("schedule", schedule_input); }
TEST(FuzzRegression, Trace) { replay("trace", trace_input); }
TEST(FuzzRegression, Chakra) { replay("chakra", chakra_input); }

}  // namespace
}  // namespace eppsim::fuzz
