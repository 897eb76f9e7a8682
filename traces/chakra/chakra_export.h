#pragma once
// A Schedule as a Chakra execution trace that ASTRA-sim runs: PREFIX.<rank>.et
// per rank and the communicator groups in PREFIX.comm_groups.json (pass it as
// ASTRA-sim's --comm-group-configuration).
//
// Op -> node (node id = op index; data_deps = the op's deps; ctrl_deps = the
// previous op on its stream, which Chakra has no other way to say):
//   COMPUTE     COMP_NODE, duration_micros (the fixed or estimated duration,
//               rounded), num_ops = flops, tensor_size = memory traffic
//   SEND/RECV   COMM_SEND_NODE / COMM_RECV_NODE with comm_src, comm_dst, comm_size, comm_tag
//   COLLECTIVE  COMM_COLL_NODE with comm_type, comm_size and pg_name = group id + 1
//               (ASTRA-sim reads pg_name "0" as every rank)
//   MEMORY      METADATA_NODE (ASTRA-sim skips it), the MemoryOp in an attribute
// Every node says is_cpu_op = false. What Chakra cannot say (streams, exact
// durations, the compute op's work, the header, summary, placement, group
// names) rides in "eppsim.*" attributes (chakra_attributes.h), so that import_chakra gives
// the Schedule back: same ops, deps, sizes and groups.
#include <filesystem>
#include <vector>

#include "traces/chakra/chakra_comm_groups.h"
#include "traces/chakra/chakra_stream.h"
#include "proto/schedule.pb.h"

namespace eppsim {

struct ChakraTrace {
  std::vector<ChakraRankTrace> ranks;
  ChakraCommGroups comm_groups;  // group id + 1 -> ranks, every group of the schedule
};

// The schedule must pass validate_schedule.
ChakraTrace export_chakra(const proto::Schedule& schedule);
// Writes PREFIX.<rank>.et and PREFIX.comm_groups.json.
void write_chakra_trace(const ChakraTrace& trace, const std::filesystem::path& prefix);

}  // namespace eppsim
