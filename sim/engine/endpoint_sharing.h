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
// Latency. A flow's duration may name a latency part L (add's latency_s; the
// analytic engine gives a collective's time at 0 bytes, its rounds' hop
// latencies): L runs first and takes its full time whatever the rate, only
// the rest (D - L, the bytes) is stretched by sharing and slowdowns, as the
// flow engine's flows share link bandwidth but not propagation delay.
//
// Limits, deliberately: a flow holds its ports at its rate during its
// latency too (a collective's rounds interleave latency and bytes, and the
// cost model answers one duration with no schedule of the two); a flow uses
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
//
// Ports are kept in classes: the ports that hold the same flows and have the
// same capacity form one class, and max-min fairness cannot tell them apart
// (they offer the same share at every step of the filling). A collective over
// 16,384 ranks uses 32,768 ports or more, and another over the same ranks the
// same ports: the two make one class, and an update walks and fills classes,
// not ports. add() and remove() move each of the flow's ports to the class
// of the port's new set of flows: an existing class where one holds that set
// (so that classes split as flows come and merge again as they go), else a
// new one. A port at full capacity with one flow is in no class: it bounds
// its flow's rate by 1, which every rate is anyway, so it only records which
// flow holds it. Flows, ports and classes are indices into arrays reused
// across calls: adding, removing and updating allocate nothing once they
// have grown.
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
  // given it a rate. Of its duration, `latency_s` is latency: it runs first
  // and takes its full time whatever the flow's rate (see above). The id is
  // reused after remove().
  FlowId add(std::span<const PortId> ports, double duration_s, double now_s, double latency_s = 0.0);
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
  bool pending() const {
    return !dirty_classes_.empty() || !dirty_flows_.empty() || !alone_.empty() || !slowed_.empty();
  }

  double rate(FlowId flow) const { return flows_[flow].rate; }
  std::uint32_t version(FlowId flow) const { return flows_[flow].version; }
  std::size_t active() const { return active_; }

 private:
  using ClassId = std::uint32_t;
  static constexpr ClassId kNoClass = std::numeric_limits<ClassId>::max();
  static constexpr FlowId kNoFlow = std::numeric_limits<FlowId>::max();
  struct Flow {
    std::vector<PortId> ports;
    std::vector<ClassId> classes;  // the classes of its ports, each once
    double remaining_s = 0.0;  // work left at full speed, as of updated_s
    double latency_s = 0.0;    // of remaining_s, the latency left: not slowed by the rate or speed
    double updated_s = 0.0;
    double rate = 0.0;
    double speed = 1.0;  // 1 / set_slowdown's factor: progresses at rate * speed
    double finish_s = std::numeric_limits<double>::infinity();
    std::uint32_t version = 0;
    std::uint64_t seen = 0;  // epoch of the last update() that reached it
    std::uint64_t retimed = 0;  // epoch of the last update() that moved its finishing time
    std::uint64_t marked = 0;  // a stamp of find_class()'s set comparison
    // Where the add() of stamp moved_at takes the ports this flow held alone.
    std::uint64_t moved_at = 0;
    ClassId moved_to = kNoClass;
    bool frozen = false;
    bool live = false;
    // Brings remaining_s (and latency_s) from updated_s to now_s at the flow's rate.
    void advance(double now_s);
    // When it ends from now_s at `at_rate` (rate * speed): never at rate 0.
    double finish_at(double now_s, double at_rate) const;
  };
  // A port holds no flow (of == kNoClass, sole == kNoFlow), one flow at
  // full capacity (of == kNoClass, sole == that flow), or is in class `of`.
  struct Port {
    double limit = 1.0;  // the port's capacity (set_capacity)
    ClassId of = kNoClass;
    FlowId sole = kNoFlow;
  };
  struct PortClass {
    std::vector<FlowId> flows;  // on each of its ports
    double limit = 1.0;  // each of its ports' capacity
    std::uint32_t ports = 0;  // how many ports it holds; 0: free
    // During a filling: the capacity left to unfrozen flows, and how many.
    double capacity = 0.0;
    std::uint32_t unfrozen = 0;
    std::uint64_t seen = 0;  // epoch of the last walk that reached it
    // Where the add() or remove() of stamp moved_at takes its ports.
    ClassId moved_to = kNoClass;
    std::uint64_t moved_at = 0;
  };
  // The class a flow being added takes at its ports that had none, by their capacity.
  struct Fresh {
    double limit;
    ClassId to;
  };

  // A new class of the flows in class_flows_ at `limit`, holding no port yet.
  ClassId new_class(double limit);
  // The class of exactly the flows in class_flows_ (not empty) at `limit`, if
  // one exists; else kNoClass.
  ClassId find_class(double limit);
  // Puts `port` in class `to` (kNoClass: out of any class, holding `sole`).
  void move_port(Port& port, ClassId to, FlowId sole = kNoFlow);
  // Frees the classes move_port() emptied, taking each out of its flows'
  // lists of classes but that of `leaving` (a flow being removed, whose list
  // remove() clears; kNoFlow: none).
  void free_emptied(FlowId leaving);

  // Gives `flow` its new rate from `now_s` on, and reports it moved.
  void set_rate(FlowId flow, double rate, double now_s);
  // Adds `flow` to this update's component, with its classes not yet in it.
  void reach(FlowId flow);
  void recompute(double now_s);
  void fill(double now_s);
  void rate_alone(double now_s);
  void retime_slowed(double now_s);

  std::vector<Flow> flows_;
  std::vector<FlowId> free_flows_;
  std::vector<Port> ports_;
  std::vector<PortClass> classes_;
  std::vector<ClassId> free_classes_;
  // Scratch of one add(), remove() or set_capacity(): the flows of a class to
  // find or make, the classes it left with no port, the fresh classes of add().
  std::vector<FlowId> class_flows_;
  std::vector<ClassId> emptied_;
  std::vector<Fresh> fresh_;
  std::uint64_t move_stamp_ = 0;  // of PortClass::moved_at
  std::uint64_t mark_stamp_ = 0;  // of Flow::marked
  std::vector<ClassId> dirty_classes_;
  std::vector<FlowId> dirty_flows_;  // flows left alone at a port: no class of theirs changed
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
  // Scratch of one update(): the component's classes and flows, the classes
  // still to settle and this round's bottlenecks, the flows whose finishing time moved.
  std::vector<ClassId> component_classes_;
  std::vector<FlowId> component_flows_;
  std::vector<ClassId> live_classes_;
  std::vector<ClassId> bottlenecks_;
  std::vector<FlowId> changed_;
};

}  // namespace eppsim
