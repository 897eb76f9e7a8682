#pragma once
// Reading a Schedule file, for every program that takes one (eppsim sim,
// replay and export; eppsim-run).
#include <filesystem>

#include "proto/schedule.pb.h"

namespace eppsim {

// A Schedule file (.pb, .json or .textproto), checked before anything is sized
// by it: num_ranks in 1..limits::kMaxRanks and validate_schedule's rules. An
// older file is converted first: a version-2 file's segment messages
// (schedule/compute_segments.h), ops as messages before version 5
// (schedule/program_ops.h). Errors are InputErrors naming the file.
proto::Schedule read_schedule_file(const std::filesystem::path& path);

}  // namespace eppsim
