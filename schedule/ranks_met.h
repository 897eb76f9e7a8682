#pragma once
// Which ranks a rank meets: the peers of its SEND and RECV ops and the members
// of the groups its collectives run on. A hybrid emulation (eppsim-run --ranks)
// needs the simulated events of every virtual rank its real ranks meet.
#include <cstdint>
#include <span>
#include <vector>

#include "proto/schedule.pb.h"

namespace eppsim {

// The ranks `rank` meets, itself excluded, ascending.
std::vector<std::uint32_t> ranks_met(const proto::Schedule& schedule, std::uint32_t rank);

// `ranks` (ascending) and every rank one of them meets, ascending.
std::vector<std::uint32_t> ranks_and_those_they_meet(const proto::Schedule& schedule, std::span<const std::uint32_t> ranks);

}  // namespace eppsim
