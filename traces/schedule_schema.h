#pragma once
// The Schedule schema version eppsim writes (schedule.proto's ScheduleHeader);
// readers refuse a newer one.
#include <cstdint>

namespace eppsim {

inline constexpr std::uint32_t kScheduleSchemaVersion = 2;

}  // namespace eppsim
