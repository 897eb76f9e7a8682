#pragma once
// Human names of schedule enums, one place for messages, traces and exports.
#include <string_view>

#include "proto/schedule.pb.h"

namespace eppsim {

// "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast".
std::string_view collective_kind_name(proto::CollectiveKind kind);

}  // namespace eppsim
