#pragma once
// The kinds of communication, one vocabulary for the cost models (CostModel's
// collectives), calibration fits, `eppsim-bench comm`, the runtime's comm ops
// and the collective micro-benchmark's report, and the bytes each counts.
// (schedule.proto's CollectiveKind is the wire form: schedule/op_cost.h's
// to_model converts it.)
//
// bus_bytes is the data each rank moves as nccl-tests counts it (its "busbw"
// is bus_bytes / time), from schedule.proto's size_bytes S and group size n:
//   send-recv       S                  (n = 2)
//   all-reduce      2(n-1)/n * S       (S = the whole vector)
//   reduce-scatter  (n-1)/n * S        (S = the whole vector)
//   all-gather      (n-1) * S          (S = the per-rank input; n S the output)
//   all-to-all      (n-1)/n * S        (S = the per-rank send buffer)
//   broadcast       S
// algbw_bytes is the data nccl-tests' "algbw" divides by the time: S, but the
// whole output n S for all-gather.
#include <cstdint>
#include <optional>
#include <string_view>

namespace eppsim {

enum class CommKind : std::uint8_t { SendRecv, AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast };

// How a collective runs (schedule.proto's CollectiveAlgorithm): Auto lets the
// network take its fastest (models/network/stepped_network.h); the others are
// the algorithms of models/collective_steps.h.
enum class CollectiveAlgorithm : std::uint8_t { Auto, Ring, Tree, Direct, Hierarchical };

// "send-recv", "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast".
std::string_view comm_kind_name(CommKind kind);
// The kind of one of those names; nullopt for any other.
std::optional<CommKind> parse_comm_kind(std::string_view name);
// Every name parse_comm_kind knows, comma-separated, for messages.
std::string_view comm_kind_names();

// Bytes each rank moves, by the table above (size_bytes as in schedule.proto).
double bus_bytes(CommKind kind, std::uint32_t group_size, double size_bytes);
// The bytes of algbw, by the note above.
double algbw_bytes(CommKind kind, std::uint32_t group_size, double size_bytes);

}  // namespace eppsim
