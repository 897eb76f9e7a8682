#include "sim/engine/flow_engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "base/errors.h"
#include "base/input_limits.h"
#include "base/progress.h"
#include "sim/engine/engine_core.h"
#include "sim/engine/flow_collective_plan.h"
#include "sim/engine/flow_interference.h"
#include "sim/engine/flow_memory.h"
#include "sim/engine/forked_run.h"
#include "sim/engine/simgrid_platform.h"
#include "schedule/executor/executor_core.h"
#include "schedule/executor/step_incomplete.h"
#include "schedule/op_cost.h"

namespace eppsim {

namespace sg4 = simgrid::s4u;

namespace {

// Long enough that a schedule that still has work never reaches it: waking at
// it means nothing was left to simulate, a deadlock. Far past
// limits::kMaxSimulatedSeconds, so that an op ending past that bound (the
// longest: limits::kMaxOpBytes at the slowest link) is reported as such first.
constexpr double kDeadlockTimeout_s = 1e17;

// An op of `rank`'s `stream` ending at `end_s`: a simulated time the trace
// cannot represent is an input error (schedule/executor/executor_report.cpp
// checks the same when the trace is written).
void check_representable(double end_s, std::uint32_t rank, std::uint32_t stream) {
  if (!(end_s <= limits::kMaxSimulatedSeconds)) {
    throw InputError(fmt::format("schedule: an op of rank {} (stream {}) ends at simulated time {} s, which cannot be "
                                 "represented (it must lie in 0 to {} s, the bound of base/input_limits.h): an "
                                 "input's duration, size or rate is out of proportion",
                                 rank, stream, end_s, limits::kMaxSimulatedSeconds));
  }
}

using PlanKey = std::tuple<std::uint32_t, int, int, std::uint64_t>;  // group, kind, algorithm, size

// A collective in flight: its plan, the stream each position runs it on (its
// mailboxes), and the programs (member x channel) still running.
struct CollectiveRun {
  const CollectivePlan* plan = nullptr;
  std::vector<std::uint32_t> stream_of_position;
  std::uint32_t remaining = 0;
};

// What the core hands one (rank, stream) actor.
struct Task {
  enum class Kind : std::uint8_t { Sleep, Send, Recv, Collective, Rated } kind = Kind::Sleep;
  ActivityId id = 0;
  double seconds = 0.0;          // Sleep; Rated: the work at full speed
  std::uint64_t bytes = 0;       // Send
  std::uint32_t peer = 0;        // Send: receiver; Recv: sender
  std::uint32_t peer_stream = 0; // Send: the receiver's stream
  std::uint32_t position = 0;    // Collective: this member's plan position
  bool compute = false;          // Rated: a compute op of this stream's rank (else a slept communication)
};

struct StreamActor {
  std::uint32_t rank = 0;
  std::uint32_t stream = 0;
  sg4::SemaphorePtr ready;
  sg4::SemaphorePtr interrupt;  // a Rated task's rate may have changed
  std::deque<Task> tasks;
};

class FlowExecutor final : public GlobalExecutorHooks {
 public:
  FlowExecutor(const proto::Schedule& schedule, const CostModel& cost, const EnginePlacement& placement,
               const Topology& topology, const FaultPlan* faults, const Interference& interference,
               const TraceSelection& trace, const FlowEngineOptions& options)
      : cost_(cost),
        interference_(interference),
        faults_(faults != nullptr ? *faults : no_faults_),
        chip_of_rank_(placement.chip_of_rank),
        topology_(topology),
        core_(schedule, *this, simulated_core_options(options.max_blocked_ops_reported, trace)),
        interfering_(interference, interference.enabled ? schedule.num_ranks() : 0) {
    if (chip_of_rank_.size() < schedule.num_ranks()) {
      throw std::invalid_argument(fmt::format("flow engine: the placement covers {} ranks but the schedule has {}",
                                              chip_of_rank_.size(), schedule.num_ranks()));
    }
  }

  proto::Trace run() {
    const std::vector<PlatformFlow> flows = plan_flows();
    std::vector<VertexId> chips(chip_of_rank_.begin(), chip_of_rank_.begin() + core_.schedule().num_ranks());
    std::sort(chips.begin(), chips.end());
    chips.erase(std::unique(chips.begin(), chips.end()), chips.end());
    const std::size_t hosts = SimgridPlatform::hosts_needed(chips, flows);
    const std::size_t actors = actors_needed();
    const ActorStacks stacks = actor_stacks_for(actors, max_map_count());
    const PlatformMemory memory = check_platform_memory(hosts, actors, stacks);
    start_simgrid_engine(stacks);
    platform_ = std::make_unique<SimgridPlatform>(topology_, chips, flows);
    create_actors();
    progress::ProgressLine line("simulating");
    line_ = &line;
    sg4::Engine::get_instance()->run();
    line_ = nullptr;
    if (error_) rethrow_keeping_partial_trace(error_, core_, "flow");
    proto::Trace trace = core_.trace("flow");
    log_platform_memory(memory, core_.ops_total());
    if (fatal_ != nullptr) mark_incomplete(trace, fatal_->at_s, fatal_->reason, core_);
    if (!stall_.empty()) mark_incomplete(trace, last_end_s_, stall_, core_);
    return trace;
  }

  void compute_ready(ActivityId id, OpRef ref, double now) override {
    const OpView op = core_.op(ref);
    const double duration_s = compute_duration(cost_, core_.schedule(), op, segments_).value;
    if (interference_.enabled && op.duration_source() != proto::DURATION_FIXED && duration_s > 0.0) {
      Task task{Task::Kind::Rated, id, duration_s};
      task.compute = true;
      StreamActor* actor = push(ref.rank, op.stream(), task);
      interfering_.start_compute(id, ref.rank, actor);
      return;
    }
    push(ref.rank, op.stream(), Task{Task::Kind::Sleep, id, faults_.compute_time_s(ref.rank, now, duration_s)});
  }

  void transfer_ready(ActivityId id, OpRef send, OpRef recv, double) override {
    const OpView s = core_.op(send);
    const std::array endpoints{send.rank, recv.rank};
    const std::uint32_t recv_stream = core_.op(recv).stream();
    const double bytes = static_cast<double>(s.size_bytes());
    if (s.duration_source() == proto::DURATION_FIXED) {
      push(recv.rank, recv_stream, Task{Task::Kind::Sleep, id, fixed_s(s)});
    } else if (cost_.fitted_p2p(send.rank, recv.rank)) {
      const double seconds = transfer_duration(cost_, s, send.rank, recv.rank).value;
      StreamActor* actor = push(recv.rank, recv_stream, Task{sleep_kind(seconds), id, seconds});
      if (interference_.enabled && seconds > 0.0) {
        interfering_.start_comm(id, TrafficClass::PointToPoint, bytes, endpoints, actor);
      }
    } else if (chip_of_rank_[send.rank] == chip_of_rank_[recv.rank]) {
      push(recv.rank, recv_stream, Task{Task::Kind::Sleep, id, 0.0});
    } else {
      if (interference_.enabled) interfering_.start_comm(id, TrafficClass::PointToPoint, bytes, endpoints, nullptr);
      Task put{Task::Kind::Send, id};
      put.bytes = s.size_bytes();
      put.peer = recv.rank;
      put.peer_stream = recv_stream;
      push(send.rank, s.stream(), put);
      Task get{Task::Kind::Recv, id};
      get.peer = send.rank;
      push(recv.rank, recv_stream, get);
    }
  }

  void collective_ready(ActivityId id, std::span<const OpRef> members, double) override {
    const OpView op = core_.op(members.front());
    if (op.duration_source() == proto::DURATION_FIXED || members.size() <= 1) {
      const double seconds = op.duration_source() == proto::DURATION_FIXED ? fixed_s(op) : 0.0;
      push(members.front().rank, op.stream(), Task{Task::Kind::Sleep, id, seconds});
      return;
    }
    std::vector<std::uint32_t> ranks;
    for (const OpRef& m : members) ranks.push_back(m.rank);
    const TrafficClass traffic = interference_.enabled ? traffic_of(ranks) : TrafficClass::PointToPoint;
    const double bytes = static_cast<double>(op.size_bytes());
    if (fitted(op)) {
      const double seconds = collective_duration(cost_, op, ranks).value;
      StreamActor* actor = push(members.front().rank, op.stream(), Task{sleep_kind(seconds), id, seconds});
      if (interference_.enabled && seconds > 0.0) interfering_.start_comm(id, traffic, bytes, ranks, actor);
      return;
    }
    if (interference_.enabled) interfering_.start_comm(id, traffic, bytes, ranks, nullptr);
    const CollectivePlan& plan = *plans_.at(plan_key(op));
    CollectiveRun& run = collectives_[id];
    run.plan = &plan;
    run.stream_of_position.assign(plan.members.size(), 0);
    run.remaining = static_cast<std::uint32_t>(members.size()) * plan.steps.channels;
    for (const OpRef& m : members) {
      const std::uint32_t stream = core_.op(m).stream();
      const std::uint32_t position = plan.position_of_rank.at(m.rank);
      run.stream_of_position[position] = stream;
      Task task{Task::Kind::Collective, id};
      task.position = position;
      push(m.rank, stream, task);
    }
  }

 private:
  // Whether a calibration's fit prices the collective `op` (its time is then slept).
  bool fitted(OpView op) const {
    return cost_.fitted_collective(to_model(op.collective_kind()), core_.group_ranks(op.group()));
  }
  static double fixed_s(OpView op) { return static_cast<double>(op.fixed_duration_ns()) * 1e-9; }
  static PlanKey plan_key(OpView op) {
    return {op.group(), static_cast<int>(op.collective_kind()), static_cast<int>(op.algorithm()), op.size_bytes()};
  }
  static std::uint64_t actor_key(std::uint32_t rank, std::uint32_t stream) {
    return static_cast<std::uint64_t>(rank) << 32 | stream;
  }

  // Plans every collective the schedule runs on the network; returns the flows
  // of their programs and of every point-to-point message.
  std::vector<PlatformFlow> plan_flows() {
    const auto& schedule = core_.schedule();
    std::vector<PlatformFlow> flows;
    for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
      for (const OpView op : ops_of(schedule, r)) {
        if (op.duration_source() == proto::DURATION_FIXED) continue;
        if (op.is_send() && !cost_.fitted_p2p(r, op.peer()))
          flows.push_back({chip_of_rank_[r], chip_of_rank_[op.peer()], 0});
        if (op.is_collective() && !fitted(op) && !plans_.contains(plan_key(op))) add_plan(op, flows);
      }
    }
    return flows;
  }

  // The most actors alive at once: one per (rank, stream) with ops, the
  // controller and the fault injector, and for each rank a collective's extra
  // channels (run_task starts one actor per channel past the first).
  std::size_t actors_needed() const {
    const auto& schedule = core_.schedule();
    std::uint32_t channels = 1;
    for (const auto& [key, plan] : plans_) channels = std::max(channels, plan->steps.channels);
    return actors_of_streams(schedule) + static_cast<std::size_t>(schedule.num_ranks()) * (channels - 1);
  }

  void add_plan(OpView op, std::vector<PlatformFlow>& flows) {
    proto::CollectiveOp c;
    c.set_kind(op.collective_kind());
    c.set_group(op.group());
    c.set_size_bytes(op.size_bytes());
    c.set_algorithm(op.algorithm());
    plans_.emplace(plan_key(op), std::make_unique<CollectivePlan>(plan_collective(
                                     c, core_.group_ranks(op.group()), chip_of_rank_, topology_, cost_, flows)));
  }

  void create_actors() {
    const auto& schedule = core_.schedule();
    for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
      for (const OpView op : ops_of(schedule, r)) {
        auto [it, added] = actors_.try_emplace(actor_key(r, op.stream()));
        if (!added) continue;
        it->second = std::make_unique<StreamActor>();
        StreamActor* actor = it->second.get();
        actor->rank = r;
        actor->stream = op.stream();
        actor->ready = sg4::Semaphore::create(0);
        actor->interrupt = sg4::Semaphore::create(0);
        sg4::Actor::create(fmt::format("rank{}/{}", r, op.stream()), platform_->host(chip_of_rank_[r]),
                           [this, actor] { stream_loop(*actor); });
      }
    }
    done_ = sg4::Semaphore::create(0);
    if (schedule.num_ranks() == 0) return;
    sg4::Actor::create("controller", platform_->host(chip_of_rank_[0]), [this] { control(); });
    if (!faults_.empty()) sg4::Actor::create("faults", platform_->host(chip_of_rank_[0]), [this] { inject_faults(); });
  }

  // Strikes each fault at its time (fault_plan.h); a fatal one ends the run.
  void inject_faults() {
    sg4::Actor::self()->daemonize();
    for (const EngineFault& fault : faults_.faults()) {
      const double wait_s = fault.at_s - sg4::Engine::get_clock();
      if (wait_s > 0.0) sg4::this_actor::sleep_for(wait_s);
      if (core_.all_done()) return;
      if (fault.fatal) {
        fatal_ = &fault;
        done_->release();
        return;
      }
      if (fault.spec.kind != FaultKind::LinkDegraded && fault.spec.kind != FaultKind::LinkFailure) continue;
      sg4::SplitDuplexLink* link = platform_->link(fault.link);
      if (link == nullptr) continue;  // no route of this schedule uses it
      for (sg4::Link* direction : {link->get_link_up(), link->get_link_down()}) {
        if (fault.spec.kind == FaultKind::LinkFailure) {
          direction->turn_off();
        } else {
          direction->set_bandwidth(topology_.link(fault.link).bandwidth.value * fault.spec.factor);
        }
      }
    }
  }

  // Hands a task to a stream's actor. Called from the core's hooks, so it
  // makes no simcall: a simcall lets other actors run, and one of them could
  // enter the core while this one is still inside it. wake() releases the
  // actors once the core has returned.
  StreamActor* push(std::uint32_t rank, std::uint32_t stream, const Task& task) {
    StreamActor* actor = actors_.at(actor_key(rank, stream)).get();
    actor->tasks.push_back(task);
    to_wake_.push_back(actor);
    return actor;
  }

  // Each release may let other actors run (and push or wake too): pop one at a time.
  void wake() {
    interfering_.update();
    std::vector<StreamActor*>& to_interrupt = interfering_.to_interrupt();
    while (!to_wake_.empty() || !to_interrupt.empty()) {
      const bool interrupt = to_wake_.empty();
      std::vector<StreamActor*>& list = interrupt ? to_interrupt : to_wake_;
      StreamActor* actor = list.back();
      list.pop_back();
      (interrupt ? actor->interrupt : actor->ready)->release();
    }
  }

  // Interference (flow_engine.h). A slept communication is re-timed like
  // compute when interference is on.
  Task::Kind sleep_kind(double seconds) const {
    return interference_.enabled && seconds > 0.0 ? Task::Kind::Rated : Task::Kind::Sleep;
  }

  TrafficClass traffic_of(std::span<const std::uint32_t> ranks) const {
    for (const std::uint32_t r : ranks) {
      if (topology_.node_of(chip_of_rank_[r]) != topology_.node_of(chip_of_rank_[ranks.front()]))
        return TrafficClass::InterNodeCollective;
    }
    return TrafficClass::IntraNodeCollective;
  }

  // A compute op, or a slept communication, of `task.seconds` at full speed
  // whose rate follows interference: a sleep re-timed whenever the actor is
  // interrupted (its rank's communication, or its ranks' computing, changed).
  void run_rated(StreamActor& actor, const Task& task) {
    double work_s = task.seconds;
    double from_s = sg4::Engine::get_clock();
    double slowdown = task.compute ? interfering_.compute_slowdown(actor.rank) : interfering_.comm_slowdown(task.id);
    for (;;) {
      const double wait_s =
          task.compute ? faults_.compute_time_s(actor.rank, from_s, slowdown * work_s) : slowdown * work_s;
      check_representable(from_s + wait_s, actor.rank, actor.stream);
      if (!(wait_s > 0.0) || actor.interrupt->acquire_timeout(wait_s)) break;
      const double now_s = sg4::Engine::get_clock();
      const double done_s = task.compute ? faults_.compute_work_s(actor.rank, from_s, now_s) : now_s - from_s;
      work_s = std::max(0.0, work_s - done_s / slowdown);
      from_s = now_s;
      slowdown = task.compute ? interfering_.compute_slowdown(actor.rank) : interfering_.comm_slowdown(task.id);
    }
  }

  // Runs `work`; an exception ends the simulation (the controller rethrows it
  // after Engine::run). SimGrid's own kill of a daemon passes through.
  template <typename Work>
  void guarded(Work&& work) {
    try {
      work();
    } catch (const simgrid::ForcefulKillException&) {
      throw;
    } catch (const simgrid::NetworkFailureException&) {
      // A failed link (a simulated fault) took the transfer down: it never
      // completes, and this actor waits until the run ends.
      sg4::Semaphore::create(0)->acquire();
    } catch (...) {
      if (!error_) error_ = std::current_exception();
      done_->release();
    }
  }

  void control() {
    guarded([&] {
      core_.start(0.0);
      wake();
      if (!core_.all_done()) done_->acquire_timeout(kDeadlockTimeout_s);
      if (error_ || fatal_ != nullptr || core_.all_done()) return;
      stall_ = stall_reason(faults_, last_end_s_);
      if (!stall_.empty()) return;
      if (const auto link = platform_->slowest_link_in_use()) {
        // Not a deadlock: a transfer so slow that it outlasts the timeout.
        const Link& l = topology_.link(*link);
        throw InputError(fmt::format(
            "schedule: a transfer over link {}-{} is still under way at simulated time {:g} s, which cannot be "
            "represented (it must lie in 0 to {} s, the bound of base/input_limits.h): an input's duration, size or "
            "rate (a link's bandwidth, or a link_degraded fault's bandwidth_factor) is out of proportion",
            topology_.vertex_name(l.a), topology_.vertex_name(l.b), sg4::Engine::get_clock(),
            limits::kMaxSimulatedSeconds));
      }
      core_.throw_deadlock();
    });
  }

  void finish(ActivityId id) {
    const double now = sg4::Engine::get_clock();
    last_end_s_ = now;
    if (interference_.enabled) interfering_.end(id);
    core_.finish(id, now);
    const bool all_done = core_.all_done();
    if (line_ != nullptr) {
      line_->update([&] { return simulation_progress(core_, now, line_->elapsed_s()); });
    }
    if (all_done) done_->release();
    wake();
  }

  void stream_loop(StreamActor& actor) {
    sg4::Actor::self()->daemonize();
    for (;;) {
      actor.ready->acquire();
      const Task task = actor.tasks.front();
      actor.tasks.pop_front();
      guarded([&] { run_task(actor, task); });
    }
  }

  void run_task(StreamActor& actor, const Task& task) {
    switch (task.kind) {
      case Task::Kind::Sleep:
        check_representable(sg4::Engine::get_clock() + task.seconds, actor.rank, actor.stream);
        if (task.seconds > 0.0) sg4::this_actor::sleep_for(task.seconds);
        finish(task.id);
        return;
      case Task::Kind::Rated:
        run_rated(actor, task);
        finish(task.id);
        return;
      case Task::Kind::Send:
        mailbox(task.peer, task.peer_stream, actor.rank, 0)->put(&payload_, slowed_bytes(task.id, task.bytes));
        return;
      case Task::Kind::Recv:
        receive(mailbox(actor.rank, actor.stream, task.peer, 0), &sink_);
        finish(task.id);
        return;
      case Task::Kind::Collective: {
        CollectiveRun& run = collectives_.at(task.id);
        const std::uint32_t channels = run.plan->steps.channels;
        const VertexId chip = chip_of_rank_[actor.rank];
        for (std::uint32_t ch = 1; ch < channels; ++ch) {
          sg4::Actor::create("channel", platform_->host(chip, ch), [this, id = task.id, p = task.position, ch] {
            sg4::Actor::self()->daemonize();
            guarded([&] { run_program(id, p, ch); });
          });
        }
        run_program(task.id, task.position, 0);
        return;
      }
    }
  }

  // One member's program of a collective on one channel; the last program of
  // the collective to end finishes it.
  void run_program(ActivityId id, std::uint32_t position, std::uint32_t channel) {
    CollectiveRun& run = collectives_.at(id);
    const CollectivePlan& plan = *run.plan;
    const std::uint32_t me = plan.members[position];
    const VertexId my_chip = chip_of_rank_[me];
    const std::uint32_t my_stream = run.stream_of_position[position];
    std::vector<sg4::CommPtr> comms;
    void* sink = nullptr;
    for (std::size_t p = 0; p < plan.steps.phases.size(); ++p) {
      const CollectivePhase& phase = plan.steps.phases[p];
      const auto [ring_index, i] = plan.place[phase.layout][position];
      const auto& ring = plan.steps.layouts[phase.layout].rings[ring_index];
      const auto k = static_cast<std::uint32_t>(ring.size());
      if (k <= 1) continue;
      // A phase of many rounds may run as one pass (flow_collective_plan.h).
      const PhasePass& passes = plan.pass(p, channel);
      for (std::uint32_t pass = 0; pass < passes.passes; ++pass) {
        const auto bytes = static_cast<std::uint64_t>(
            std::llround(phase.bytes * passes.rounds_per_pass * interfering_.comm_slowdown(id)));
        comms.clear();
        if (phase.chain) {
          // Cut-through chain: receive the header, then forward header and data.
          const std::uint32_t prev = i > 0 ? plan.members[ring[i - 1]] : me;
          const bool from_prev = i > 0 && chip_of_rank_[prev] != my_chip;
          if (from_prev) {
            auto* box = mailbox(me, my_stream, prev, channel);
            auto header = box->get_async(&sink);
            comms.push_back(box->get_async(&sink));
            header->wait();
          }
          if (i + 1 < k) {
            const std::uint32_t next_position = ring[i + 1];
            const std::uint32_t next = plan.members[next_position];
            if (chip_of_rank_[next] != my_chip) {
              auto* box = mailbox(next, run.stream_of_position[next_position], me, channel);
              comms.push_back(box->put_async(&payload_, 0));
              comms.push_back(box->put_async(&payload_, bytes));
            }
          }
        } else {
          // Every member waits the same, so that the phase's flows start
          // together as its rounds would.
          if (passes.wait_s > 0.0) sg4::this_actor::sleep_for(passes.wait_s);
          // Every put and all but the last get asynchronously; the last get
          // blocks (one simcall instead of two).
          sg4::Mailbox* last_get = nullptr;
          for (std::uint32_t shift : phase.shifts) {
            const std::uint32_t to_position = ring[(i + shift) % k];
            const std::uint32_t to = plan.members[to_position];
            if (chip_of_rank_[to] != my_chip) {
              comms.push_back(mailbox(to, run.stream_of_position[to_position], me, channel)->put_async(&payload_, bytes));
            }
            const std::uint32_t from = plan.members[ring[(i + k - shift % k) % k]];
            if (chip_of_rank_[from] != my_chip) {
              if (last_get != nullptr) comms.push_back(last_get->get_async(&sink));
              last_get = mailbox(me, my_stream, from, channel);
            }
          }
          if (last_get != nullptr) receive(last_get, &sink);
        }
        for (auto& comm : comms) comm->wait();
      }
    }
    if (--run.remaining == 0) {
      collectives_.erase(id);
      finish(id);
    }
  }

  // A message's bytes, times its communication's slowdown when interference
  // slows it as it starts (flow_engine.h).
  std::uint64_t slowed_bytes(ActivityId id, std::uint64_t bytes) const {
    if (!interference_.enabled) return bytes;
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) * interfering_.comm_slowdown(id)));
  }

  // A blocking receive in one simcall (Mailbox::get takes two).
  static void receive(sg4::Mailbox* box, void** sink) { box->get_init()->set_dst_data(sink, sizeof(void*))->wait(); }

  // The mailbox of messages to `receiver`'s stream from `sender` on `channel`:
  // per-pair FIFO keeps them matched in order. Created on first use.
  sg4::Mailbox* mailbox(std::uint32_t receiver, std::uint32_t stream, std::uint32_t sender, std::uint32_t channel) {
    const std::uint64_t key = static_cast<std::uint64_t>(receiver) << 40 | static_cast<std::uint64_t>(stream) << 32 |
                              static_cast<std::uint64_t>(sender) << 8 | channel;
    if (const auto it = mailboxes_.find(key); it != mailboxes_.end()) return it->second;
    // by_name is a simcall (other actors may run meanwhile): insert after it.
    auto* box = sg4::Mailbox::by_name(fmt::format("{}/{}<{}#{}", receiver, stream, sender, channel));
    mailboxes_.emplace(key, box);
    return box;
  }

  const CostModel& cost_;
  const Interference interference_;
  const FaultPlan no_faults_;
  const FaultPlan& faults_;
  const EngineFault* fatal_ = nullptr;  // the fatal fault that ended the run
  std::string stall_;                   // why a run that ran out of events is incomplete
  double last_end_s_ = 0.0;             // when the last activity ended
  std::vector<VertexId> chip_of_rank_;
  const Topology& topology_;
  ExecutorCore core_;
  std::vector<Segment> segments_;  // scratch for compute_duration
  std::map<PlanKey, std::unique_ptr<CollectivePlan>> plans_;
  std::unordered_map<ActivityId, CollectiveRun> collectives_;
  std::unique_ptr<SimgridPlatform> platform_;
  std::unordered_map<std::uint64_t, std::unique_ptr<StreamActor>> actors_;
  std::unordered_map<std::uint64_t, sg4::Mailbox*> mailboxes_;
  std::vector<StreamActor*> to_wake_;
  FlowInterference<StreamActor> interfering_;  // tracks nothing without interference
  sg4::SemaphorePtr done_;
  std::exception_ptr error_;
  progress::ProgressLine* line_ = nullptr;
  int payload_ = 0;  // what every message carries (only its size matters)
  void* sink_ = nullptr;  // where received payloads go
};

}  // namespace

proto::Trace run_flow(const proto::Schedule& schedule, const EngineContext& context, const FlowEngineOptions& options) {
  if (context.placement == nullptr) {
    throw std::invalid_argument(
        "flow engine: needs the ranks' placement on the cluster's topology (EngineContext::placement), which this "
        "caller did not give");
  }
  const EnginePlacement& placement = *context.placement;
  std::shared_ptr<const Topology> topology = placement.topology();  // built here, shared with the child
  const std::string bytes = run_forked("flow engine", [&] {
    FlowExecutor executor(schedule, context.cost, placement, *topology, context.faults, context.interference,
                          context.trace, options);
    return executor.run().SerializeAsString();
  });
  proto::Trace trace;
  if (!trace.ParseFromString(bytes)) throw std::runtime_error("flow engine: the simulation's trace did not parse");
  return trace;
}

}  // namespace eppsim
