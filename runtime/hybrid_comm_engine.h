#pragma once
// The CommEngine of a real rank in a hybrid emulation (eppsim-run --ranks):
// ops whose peers are all real go to the real engine (MPI, NCCL); an op that
// meets a virtual rank (runtime/virtual_peers.h) is timed, not transferred:
//   - a SEND or RECV, or a collective whose only real member is this rank,
//     ends at max(its start, the virtual sides' readiness) + the simulated
//     transfer; what a real rank sends to a virtual one is dropped;
//   - a collective with other real members first meets them in a barrier
//     (RealMembersBarrier), then ends at max(the barrier's end, the virtual
//     sides' readiness) + the simulated transfer: the real members have
//     arrived and the virtual ones would have.
// Times are on the rank's step clock, which every real rank restarts after
// the same barrier: the clock they share.
//
// Open loop (the default), the virtual sides' readiness and the transfers are
// those of the simulation (VirtualPeers). Closed loop (a VirtualWorld), the
// world re-times the virtual ranks as this rank's real ops end (op_ended) and
// says when each op meeting a virtual rank ends; a collective with other real
// members also waits for their barrier and the simulated transfer after it.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "runtime/comm_engine.h"
#include "runtime/step_clock.h"
#include "runtime/virtual_peers.h"
#include "runtime/virtual_world.h"

namespace eppsim::runtime {

// Where the real members of a group that has virtual members meet (MPI:
// runtime/mpi/mpi_group_barrier.h).
class RealMembersBarrier {
 public:
  virtual ~RealMembersBarrier() = default;
  // Enters the barrier of the real members of `group`; returns at once.
  virtual void start(ActivityId id, std::uint32_t group) = 0;
  // The barriers every real member has entered since the last call, with when
  // this rank saw them complete (its step clock).
  virtual std::vector<Completion> poll() = 0;
};

class HybridCommEngine final : public CommEngine {
 public:
  // `barrier` may be null when no op of the rank has other real members
  // beside virtual ones; `world` null for an open loop (else this rank's ops
  // that meet no virtual rank must be its pinned ones). `schedule`, `peers`
  // and `clock` must outlive the engine.
  HybridCommEngine(const proto::Schedule& schedule, std::uint32_t rank, const VirtualPeers& peers,
                   std::unique_ptr<CommEngine> real, std::unique_ptr<RealMembersBarrier> barrier, const StepClock& clock,
                   std::unique_ptr<VirtualWorld> world = nullptr);

  void start(ActivityId id, OpRef ref) override;
  std::vector<Completion> poll() override;
  std::size_t in_flight() const override;
  double next_end_s() const override;
  void step_started() override;
  void op_ended(OpRef op, double end_s) override;

 private:
  struct Timed {
    ActivityId id;
    double end_s;
  };
  const proto::Schedule& schedule_;
  std::uint32_t rank_;
  const VirtualPeers& peers_;
  std::unique_ptr<CommEngine> real_;
  std::unique_ptr<RealMembersBarrier> barrier_;
  const StepClock& clock_;
  // Closed loop: an op meeting a virtual rank until the world has timed it.
  struct Awaiting {
    ActivityId id;
    OpRef op;
    VirtualMeeting meeting;
    double barrier_end_s = -1.0;  // when the real members met (-1: not yet, or no barrier)
  };
  bool ready_to_time(const Awaiting& a) const { return !a.meeting.real_members_meet || a.barrier_end_s >= 0.0; }
  std::unique_ptr<VirtualWorld> world_;
  std::vector<Timed> timed_;
  std::map<ActivityId, VirtualMeeting> at_barrier_;  // open loop: started, waiting for the real members
  std::vector<Awaiting> awaiting_;
};

}  // namespace eppsim::runtime
