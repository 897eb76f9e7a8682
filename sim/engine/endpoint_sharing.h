#pragma once
// Shared endpoints: concurrent communication activities (flows) sharing the
// ports they use, max-min fairly, as the analytic engine models contention.
//
// Model. A port is one direction of one endpoint (a rank's NVLink or NIC,
// egress or ingress: analytic_engine.h says which a transfer or a collective
// uses). Every port has capacity 1. A flow has an uncontended duration D (the
// cost model's time for it alone: latency and bandwidth parts together) and
// progresses at a rate in (0, 1], the fraction of full speed it gets; it ends
// when the time it has run, weighted by its rates, reaches D. A flow uses each
// of its ports at its whole rate, so k flows on one port and nowhere else each
// get 1/k and take k times as long. The rates are the max-min fair allocation
// (progressive filling): raise every flow's rate together, freeze the flows of
// a port when it is full, and go on with the rest, so a flow held back at one
// port leaves its share of the others to the flows there.
//
// Limits, deliberately: the latency part of D is shared like the bandwidth part
// (a contended flow is stretched whole: the cost model answers one duration,
// not its two parts, and a collective's steps interleave both); a flow uses
// each of its ports at the same rate, whatever fraction of its bytes really
// crosses each; links inside the fabric (switch uplinks, torus hops) are not
// modelled, only endpoints.
// The flow engine (SimGrid, link by link) is the contention reference.
//
// A port's capacity may be lowered (set_capacity: a degraded or failed link,
// sim/engine/fault_plan.h): its flows then share that capacity instead of 1.
// A flow whose bottleneck has capacity 0 gets rate 0 and an infinite finishing
// time: it never ends.
//
// A flow may be slowed (set_slowdown: compute beside it on one of its ranks,
// analytic_engine.h): it then progresses at rate / slowdown, still holding its
// ports at its whole rate (the ports' other flows gain nothing from it).
//
// Rates change only when a flow is added or removed, a capacity or a slowdown changes. Callers batch those made
// at one instant and call update() once before time advances: it recomputes
// the rates of the flows connected (through shared ports, transitively) to
// the changed ones only (a flow added alone on all its ports simply takes its
// smallest port capacity), and reports each flow whose finishing time moved.
// Flows and ports are indices into arrays reused across calls: adding,
// removing and updating allocate nothing once the arrays have grown.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace eppsim {

using PortId = std::uint32_t;
using FlowId = std::uint32_t;

class EndpointSharing {
 public:
  explicit EndpointSharing(std::size_t ports);

  // A flow of `duration_s` seconds at full speed over `ports` (distinct, not
  // empty, each < the port count) starts at `now_s`. It runs once update() has
  // given it a rate. The id is reused after remove().
  FlowId add(std::span<const PortId> ports, double duration_s, double now_s);
  // The flow ended at `now_s` (its finishing time, as update() reported it).
  void remove(FlowId flow, double now_s);
  // From now on (the next update()), `port` has `capacity` (in [0, 1]) instead of 1.
  void set_capacity(PortId port, double capacity);
  // From `now_s` on (reported by the next update()), `flow` progresses at
  // its rate / `slowdown` (>= 1; 1 when added).
  void set_slowdown(FlowId flow, double slowdown, double now_s);

  // Recomputes the rates of the flows connected to those added or removed
  // since the last call, at `now_s`, and calls `moved(flow, finish_s)` for each
  // flow whose finishing time changed (every added flow among them). A flow
  // due at `now_s` keeps its finishing time. Its version() changes with it, so
  // a caller keeping finishing times in a heap can drop outdated ones.
  template <class Moved>
  void update(double now_s, Moved&& moved) {
    recompute(now_s);
    if (!alone_.empty()) rate_alone(now_s);
    if (!slowed_.empty()) retime_slowed(now_s);
    for (const FlowId f : changed_) moved(f, flows_[f].finish_s);
  }
  bool pending() const { return !dirty_ports_.empty() || !alone_.empty() || !slowed_.empty(); }

  double rate(FlowId flow) const { return flows_[flow].rate; }
  std::uint32_t version(FlowId flow) const { return flows_[flow].version; }
  std::size_t active() const { return active_; }

 private:
  struct Flow {
    std::vector<PortId> ports;
    double remaining_s = 0.0;  // work left at full speed, as of updated_s
    double updated_s = 0.0;
    double rate = 0.0;
    double speed = 1.0;  // 1 / set_slowdown's factor: progresses at rate * speed
    double finish_s = std::numeric_limits<double>::infinity();
    std::uint32_t version = 0;
    std::uint64_t seen = 0;  // epoch of the last update() that reached it
    std::uint64_t retimed = 0;  // epoch of the last update() that moved its finishing time
    bool frozen = false;
    bool live = false;
  };
  // A port's flows, in the order add() and remove() leave them (a removed
  // flow's place goes to the last one). Up to kInlineFlows stay in the port
  // itself, next to its capacity, so that add() and remove() read one cache
  // line a port; a port with more has them in a list of spills_ until it
  // empties. What only a walk or a filling reads is in PortWalk.
  static constexpr std::uint32_t kInlineFlows = 4;
  static constexpr std::uint32_t kNoSpill = std::numeric_limits<std::uint32_t>::max();
  struct alignas(32) Port {
    double limit = 1.0;  // the port's capacity (set_capacity)
    std::uint32_t size = 0;
    std::uint32_t spill = kNoSpill;
    std::array<FlowId, kInlineFlows> inline_flows{};
  };
  struct PortWalk {
    double capacity = 0.0;  // left to unfrozen flows, during the filling
    std::uint32_t unfrozen = 0;
    std::uint64_t seen = 0;
  };
  std::span<const FlowId> flows_on(PortId p) const {
    const Port& port = ports_[p];
    if (port.spill == kNoSpill) return {port.inline_flows.data(), port.size};
    return spills_[port.spill];
  }
  void push_flow(Port& port, FlowId flow) {
    if (port.spill == kNoSpill && port.size < kInlineFlows) {
      port.inline_flows[port.size++] = flow;
    } else {
      push_spilled(port, flow);
    }
  }
  void erase_flow(Port& port, FlowId flow) {
    if (port.spill != kNoSpill) return erase_spilled(port, flow);
    std::uint32_t i = 0;
    while (port.inline_flows[i] != flow) ++i;
    port.inline_flows[i] = port.inline_flows[--port.size];
  }
  void push_spilled(Port& port, FlowId flow);  // past kInlineFlows
  void erase_spilled(Port& port, FlowId flow);

  void recompute(double now_s);
  void fill(double now_s);
  void rate_alone(double now_s);
  void retime_slowed(double now_s);

  std::vector<Flow> flows_;
  std::vector<FlowId> free_flows_;
  std::vector<Port> ports_;
  std::vector<PortWalk> walk_;  // by port
  std::vector<std::vector<FlowId>> spills_;
  std::vector<std::uint32_t> free_spills_;
  std::vector<PortId> dirty_ports_;
  std::vector<FlowId> slowed_;  // flows whose slowdown changed since the last update()
  // Flows added alone on all their ports since the last update(), with their
  // rate: no walk over their ports is needed unless another flow joins them.
  struct Alone {
    FlowId flow;
    double rate;
  };
  std::vector<Alone> alone_;
  bool walked_ = false;  // this update's recompute() walked a component (at epoch_)
  std::uint64_t epoch_ = 0;
  std::size_t active_ = 0;
  // Scratch of one update(): the component's ports and flows, the ports still
  // to settle and this round's bottlenecks, the flows whose finishing time moved.
  std::vector<PortId> component_ports_;
  std::vector<FlowId> component_flows_;
  std::vector<PortId> live_ports_;
  std::vector<PortId> bottlenecks_;
  std::vector<FlowId> changed_;
};

}  // namespace eppsim
