#pragma once
// Hybrid emulation (eppsim-run --ranks R): a few ranks of a Schedule run for
// real, every other rank is virtual. What a real rank needs of its virtual
// peers comes from a calibrated simulation of the whole Schedule (its Trace):
// for each of the rank's SEND, RECV and COLLECTIVE ops that meets a virtual
// rank, when the virtual side would be ready and how long the transfer took
// in the simulation once every side was.
//
// Open loop: the virtual ranks keep the simulation's times whatever the real
// ranks do. An op's virtual side is the op the simulation matched with it (a
// transfer's two events, a collective's members' events share their start
// and end: the simulators start a transfer when its last side arrives); its
// readiness is the Schedule's rule, the latest end of the previous op on its
// stream and of its dependencies, read off the simulated events. The op then
// ends at
//   max(when the real side got there, the virtual sides' readiness) + transfer,
// where the real side is this rank (a SEND or RECV, a collective whose only
// real member it is) or the last of the real members (a collective with
// several, which meet in a barrier first).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim::runtime {

struct VirtualMeeting {
  // The real members other than this rank meet first (a collective with
  // real members besides this one).
  bool real_members_meet = false;
  double virtual_ready_s = 0.0;  // the latest readiness of the virtual sides
  double transfer_s = 0.0;       // the simulated transfer, from its last arrival to its end
};

class VirtualPeers {
 public:
  // `real_ranks`: ascending, within the Schedule, `rank` among them.
  // `simulated` must be a complete, calibrated simulation of `schedule` (its
  // ranks, ops and kinds) holding the events of `rank` and of every virtual
  // rank it meets; anything else is an InputError naming `simulated_name`,
  // the field and the rule (the missing ranks as a --trace-ranks list).
  VirtualPeers(const proto::Schedule& schedule, const proto::Trace& simulated, std::span<const std::uint32_t> real_ranks,
               std::uint32_t rank, std::string_view simulated_name);

  // What op `op` of the rank meets; nullopt where every peer is real (the op
  // runs on the real engine), and for COMPUTE and MEMORY ops.
  const std::optional<VirtualMeeting>& meeting(std::uint32_t op) const { return meetings_.at(op); }
  // The ops of the rank that meet a virtual rank.
  std::size_t meetings() const { return count_; }

 private:
  std::vector<std::optional<VirtualMeeting>> meetings_;  // per op of the rank
  std::size_t count_ = 0;
};

// The events of the simulation's ranks that are not in `real_ranks`, with
// their memory samples and busy figures, added to `hybrid` (the real ranks'
// merged events, on the same clock as the simulation's: the step's start).
// hybrid.real_ranks is set; traced_ranks and busy are set when the simulation
// lists only some ranks' events. Then every time is shifted so that the
// earliest start is 0, and step_time_ns is the latest end.
void add_virtual_ranks(proto::Trace& hybrid, const proto::Trace& simulated, std::span<const std::uint32_t> real_ranks);

}  // namespace eppsim::runtime
