#include "fuzz/fuzz_entries.h"

#include <filesystem>
#include <string>
#include <system_error>

#include <unistd.h>

#include <fmt/format.h>

#include "base/errors.h"
#include "traces/chakra/chakra_import.h"
#include "traces/chakra/chakra_stream.h"
#include "traces/chrome_trace.h"
#include "schedule/schedule_validation.h"
#include "schedule/program_ops.h"
#include "base/proto_io.h"
#include "traces/rank_timeline.h"
#include "scenario/scenario.h"
#include "schedule/trace_file.h"

namespace eppsim::fuzz {
namespace {

// A folder of this process's own under the temporary directory, made on first
// use and removed when the process ends.
class ScratchDir {
 public:
  ScratchDir() : path_(std::filesystem::temp_directory_path() / fmt::format("eppsim-fuzz-{}", ::getpid())) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

const std::filesystem::path& scratch_dir() {
  static const ScratchDir dir;
  return dir.path();
}

}  // namespace

void scenario_input(std::string_view text) {
  try {
    const auto parsed = parse_scenario(text, "fuzz.textproto", scratch_dir() / "empty");
    resolve_full(parsed);
  } catch (const InputError&) {
  }
}

void schedule_input(std::string_view bytes) {
  try {
    proto::Schedule schedule;
    from_binary(bytes, &schedule, "fuzz.pb");
    convert_op_messages(schedule, "fuzz.pb");  // as read_schedule_file does
    validate_schedule(schedule);
  } catch (const InputError&) {
  }
}

void trace_input(std::string_view bytes) {
  const auto path = scratch_dir() / "trace.pb";
  write_file_atomically(path, bytes);
  try {
    const auto trace = read_trace(path);
    chrome_trace_json(trace);
    rank_timeline_csv(TraceFile(path, 0.0));  // the parts as the commands read them
  } catch (const InputError&) {
  }
}

void chakra_input(std::string_view bytes) {
  try {
    std::vector<ChakraRankTrace> ranks;
    ranks.push_back(parse_chakra_stream(bytes, "fuzz.0.et"));
    ChakraImportOptions options;
    options.peak_flops_per_s = 989e12;         // an H100's dense BF16
    options.memory_bytes_per_s = 3.35e12;      // and its HBM3
    import_chakra(ranks, "fuzz", options);
  } catch (const InputError&) {
  }
}

}  // namespace eppsim::fuzz
