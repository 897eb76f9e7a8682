#include "schedule/op_names.h"

namespace eppsim {

std::string_view collective_kind_name(proto::CollectiveKind kind) {
  switch (kind) {
    case proto::ALL_REDUCE: return "all-reduce";
    case proto::ALL_GATHER: return "all-gather";
    case proto::REDUCE_SCATTER: return "reduce-scatter";
    case proto::ALL_TO_ALL: return "all-to-all";
    case proto::BROADCAST: return "broadcast";
    default: return "collective";
  }
}

}  // namespace eppsim
