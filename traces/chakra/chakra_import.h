#pragma once
// A Chakra execution trace (one ChakraRankTrace per rank) as a Schedule.
//
// Node -> op (rank r's nodes in a topological order of their control and data
// dependencies, ties in file order, so every op's deps are earlier ops):
//   COMP_NODE        COMPUTE (phase FORWARD), DURATION_FIXED: duration_micros,
//                    or, without one, the roofline max(num_ops / peak FLOP/s,
//                    tensor_size / memory bandwidth) when the options give a GPU;
//                    flops = num_ops, memory_traffic_bytes = tensor_size
//   MEM_LOAD_NODE,   COMPUTE (no phase) of duration_micros on stream "memory":
//   MEM_STORE_NODE   a remote-memory access, priced as the trace recorded it
//   COMM_SEND_NODE   SEND to comm_dst (comm_src, when given, must be r), comm_size, comm_tag
//   COMM_RECV_NODE   RECV from comm_src (comm_dst, when given, must be r)
//   COMM_COLL_NODE   COLLECTIVE of comm_type (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER,
//                    ALL_TO_ALL, BROADCAST), comm_size per rank, over the group
//                    pg_name names in the communicator-group file; pg_name "" or
//                    "0" is every rank (as in ASTRA-sim). involved_dim is ignored.
//   METADATA_NODE,   no op; a dependency on one stands for its own dependencies
//   INVALID_NODE
// Chakra's sends are eager (ASTRA-sim ends a send without waiting for its
// receive), the Schedule's rendezvous: a dependency on a COMM_SEND node stands
// for the send's own dependencies, and the sends keep their order on their stream.
// Communication takes DURATION_FROM_WORK: the engine prices it on the network.
// Streams: "compute", "send", "recv", "collective", "memory" (sends and receives
// apart, so a ring of send-then-receive cannot deadlock on rendezvous).
// A trace eppsim wrote (chakra_export.h) comes back as the Schedule it was:
// streams, durations, compute work, memory ops, placement, header and summary.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "traces/chakra/chakra_comm_groups.h"
#include "traces/chakra/chakra_stream.h"
#include "proto/schedule.pb.h"

namespace eppsim {

struct ChakraImportOptions {
  // The communicator groups pg_name refers to; empty: only every rank ("", "0").
  ChakraCommGroups comm_groups;
  // The GPU a COMP node without duration_micros is priced on (0: unknown, it takes 0 s).
  double peak_flops_per_s = 0.0;
  double memory_bytes_per_s = 0.0;
};

// `source` names the trace in errors (the prefix); rank files are named
// SOURCE.<rank>.et in messages. The result passes validate_schedule.
proto::Schedule import_chakra(const std::vector<ChakraRankTrace>& ranks, std::string_view source,
                              const ChakraImportOptions& options = {});

// Reads PREFIX.<rank>.et and the communicator groups: `comm_groups_file` when
// given, else PREFIX.comm_groups.json when it exists; `options.comm_groups` is
// replaced by the file's.
proto::Schedule import_chakra_prefix(const std::filesystem::path& prefix, ChakraImportOptions options = {},
                                     const std::optional<std::filesystem::path>& comm_groups_file = std::nullopt,
                                     const ChakraLimits& limits = {});

}  // namespace eppsim
