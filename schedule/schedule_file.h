#pragma once
// Reading and writing a Schedule file, for every program that takes one
// (eppsim sim, replay and export; eppsim-run). A binary Schedule file is a
// message stream (base/message_stream.h), as a trace file is
// (schedule/trace_file.h): a part holds the Schedule but its placement,
// groups, programs and shared computes, then parts hold slices of those. The
// single-message form written before (at most 2 GiB) is still read.
#include <filesystem>

#include "proto/schedule.pb.h"

namespace eppsim {

// A Schedule file (.pb, .json or .textproto), checked before anything is sized
// by it: num_ranks in 1..limits::kMaxRanks and validate_schedule's rules. An
// older file is converted first: a version-2 file's segment messages
// (schedule/compute_segments.h), ops as messages before version 5
// (schedule/program_ops.h). Errors are InputErrors naming the file.
proto::Schedule read_schedule_file(const std::filesystem::path& path);

// Writes `schedule` to `path` atomically: a message stream for a binary file,
// else write_message's text or JSON. std::runtime_error naming the path.
void write_schedule_file(const proto::Schedule& schedule, const std::filesystem::path& path);

}  // namespace eppsim
