#pragma once
// What a SEND, RECV or COLLECTIVE op of a Schedule asks of a communication
// library, independent of the library: the buffers it needs on this rank and
// the element count each call takes, the groups a rank must build
// communicators for, and how ops are named in errors. Shared by the MPI
// (runtime/mpi/) and NCCL (runtime/cuda/) engines, so both move the same data.
//
// Buffers hold 32-bit floats (collectives reduce them with a sum); a size in
// bytes that is not a multiple of 4 is rounded up to whole elements.
// size_bytes per kind is schedule.proto's: the message for SEND/RECV; the
// per-rank buffer for ALL_REDUCE and BROADCAST (the whole vector), ALL_GATHER
// (each rank's input), REDUCE_SCATTER (each rank's input, the whole vector,
// split in group-size blocks rounded up) and ALL_TO_ALL (each rank's send
// buffer, split in group-size blocks rounded up).
#include <cstdint>
#include <string>
#include <vector>

#include "models/comm_kind.h"
#include "schedule/executor/executor_core.h"
#include "schedule/program_ops.h"
#include "proto/schedule.pb.h"

namespace eppsim::runtime {

constexpr std::uint64_t kCommElementBytes = 4;  // float32

struct CommShape {
  CommKind kind = CommKind::SendRecv;  // models/comm_kind.h
  bool sends = false;       // SendRecv: this rank's side is the SEND (else the RECV)
  std::uint32_t peer = 0;   // SEND/RECV: the other rank
  std::uint32_t tag = 0;    // SEND/RECV
  std::uint32_t group = 0;  // COLLECTIVE: the Schedule's group
  std::uint32_t group_size = 1;
  // The count argument of the library call, in elements: the message
  // (SEND/RECV), the vector (ALL_REDUCE, BROADCAST), each rank's block
  // (ALL_GATHER's input, REDUCE_SCATTER's output, ALL_TO_ALL's per-peer block).
  std::uint64_t count = 0;
  // Buffer sizes this rank needs, in elements (every op runs out of place;
  // BROADCAST sends from the root's send buffer and receives into the others').
  std::uint64_t send_elements = 0;
  std::uint64_t recv_elements = 0;
};

// Elements of `bytes`, rounded up.
std::uint64_t comm_elements(std::uint64_t bytes);

// The shape of a SEND, RECV or COLLECTIVE op; `group_sizes[g]` is the size of
// group g. std::invalid_argument for any other kind of op.
CommShape comm_shape(OpView op, const std::vector<std::uint32_t>& group_sizes);

// The sizes of the Schedule's groups, by id.
std::vector<std::uint32_t> group_sizes(const proto::Schedule& schedule);

// The groups `rank` belongs to, in Schedule order (the order every member
// builds their communicators in, so that building them cannot deadlock).
std::vector<std::uint32_t> groups_of_rank(const proto::Schedule& schedule, std::uint32_t rank);

// `rank`'s position in the group's rank list; std::invalid_argument if absent.
std::uint32_t position_in_group(const proto::Group& group, std::uint32_t rank);

// The largest SEND/RECV tag in the Schedule (0 when there is none).
std::uint32_t max_tag(const proto::Schedule& schedule);

// "rank 1 op 4 (RECV of 4.0 KiB from rank 0, tag 7)", "rank 0 op 2 (all-reduce
// of 1.0 MiB on group 3 [0, 1])", "rank 0 op 0 (COMPUTE forward, stage 0 chunk 1)".
std::string describe_op(const proto::Schedule& schedule, OpRef ref);

}  // namespace eppsim::runtime
