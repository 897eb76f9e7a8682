#pragma once
// The version of schedule.proto's schema this eppsim writes (ScheduleHeader.
// schema_version). Readers accept this version and older ones; a schedule
// without a header (version 0) is a legacy schedule from before the header.
// Version 2: header with the model shape, per-op duration source, compute
// splits and layer parts; no stand-in ops. Version 3: a compute op's segments
// as two packed arrays instead of a message each (schedule/compute_segments.h
// converts version 2). Version 4: compute ops shared through a table
// (Schedule.shared_computes, schedule/shared_compute.h). Version 5: each rank's
// ops as columns, every compute op's work in that table (schedule/program_ops.h
// converts versions 1-4).
#include <cstdint>

namespace eppsim {

inline constexpr std::uint32_t kScheduleSchemaVersion = 5;

}  // namespace eppsim
