#pragma once
// Reading a Schedule file, for every program that takes one (eppsim sim,
// replay and export; eppsim-run).
#include <filesystem>

#include "traces/schedule.pb.h"

namespace eppsim {

// A Schedule file (.pb, .json or .textproto), checked before anything is sized
// by it: num_ranks in 1..limits::kMaxRanks and validate_schedule's rules. A
// version-2 file's segment messages are converted first
// (traces/compute_segments.h). Errors are InputErrors naming the file.
proto::Schedule read_schedule_file(const std::filesystem::path& path);

}  // namespace eppsim
