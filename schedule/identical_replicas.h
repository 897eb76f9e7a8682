#pragma once
// Identical data-parallel replicas stored and simulated once
// (schedule.proto IdenticalReplicas).
//
// A planner whose replicas run the same sequences in the same order (e.g. a
// batch of workload.repeats copies) writes replica 0's programs alone: the
// other replicas' ranks keep empty programs and run their replica 0 copy's
// ops, a send's or receive's peer moved to their own replica, a collective
// over a group inside replica 0 moved to that group's copy in their replica.
// A group that spans replicas lists every copy of its members.
//
// A run simulates one replica of each class of replicas whose ops take the
// same times (replica_classes): the ranks of other replicas do exactly what
// their class's first replica does, since replicas meet only in collectives
// over groups that span them, which end for every member at once. The engine
// prices such a collective over all its members and waits for the arrival of
// its members in simulated replicas (live_ranks); the trace it writes gives
// every rank its source rank's figures and events (source_ranks), so that
// the report is the full simulation's, byte for byte.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "models/cost_model.h"
#include "proto/schedule.pb.h"

namespace eppsim {

struct ReplicaLayout {
  std::uint32_t copies = 1, stride = 1;
  std::uint32_t replica_of(std::uint32_t rank) const { return rank / stride % copies; }
  // Rank `rank`'s copy in replica `replica`.
  std::uint32_t copy_in(std::uint32_t rank, std::uint32_t replica) const {
    return rank - replica_of(rank) * stride + replica * stride;
  }
};

// The layout of a Schedule with identical_replicas; nullopt without.
std::optional<ReplicaLayout> replica_layout(const proto::Schedule& schedule);

// InputError naming `source` when `schedule`'s identical_replicas breaks a
// rule: copies >= 2 and stride >= 1 dividing num_ranks into whole replicas;
// programs only on replica 0's ranks (no representative listed: a run sets
// it); a send's peer in its own replica; a group inside one replica, or
// holding every copy of each member, replica 0's first.
void check_identical_replicas(const proto::Schedule& schedule, std::string_view source);

// Per rank, whether it runs its own program: every rank of a Schedule without
// identical_replicas, else the ranks of representative replicas.
std::vector<bool> live_ranks(const proto::Schedule& schedule);

// Per replica, the first replica whose copies of replica 0's ops take the
// same times under `cost` (each send, and each collective over a group inside
// a replica, priced on its copy; whether it leaves the node): its class.
std::vector<std::uint32_t> replica_classes(const proto::Schedule& schedule, const CostModel& cost);

// `schedule` (replica 0's programs) with the programs of each replica that is
// its own representative written out; `representative` per replica.
proto::Schedule with_representatives(const proto::Schedule& schedule, std::span<const std::uint32_t> representative);

// Every rank's program written out, without identical_replicas (a Schedule
// without it is returned as it is).
proto::Schedule expand_identical_replicas(const proto::Schedule& schedule);

// Per rank, the rank whose program it runs: itself, or its copy in its
// replica's representative (identity without identical_replicas).
std::vector<std::uint32_t> source_ranks(const proto::Schedule& schedule);

// The ops the Schedule stands for: each rank's program counted for every rank
// that runs it.
std::uint64_t represented_op_count(const proto::Schedule& schedule);

}  // namespace eppsim
