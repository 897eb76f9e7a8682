#include "sim/engine/endpoint_sharing.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace eppsim {
namespace {

// When work of `remaining_s` at full speed ends at `rate`: never at rate 0.
double finish_at(double now_s, double remaining_s, double rate) {
  return rate > 0.0 ? now_s + remaining_s / rate : std::numeric_limits<double>::infinity();
}

}  // namespace

EndpointSharing::EndpointSharing(std::size_t ports) : ports_(ports), walk_(ports) {}

void EndpointSharing::push_spilled(Port& port, FlowId flow) {
  if (port.spill == kNoSpill) {
    if (free_spills_.empty()) {
      port.spill = static_cast<std::uint32_t>(spills_.size());
      spills_.emplace_back();
    } else {
      port.spill = free_spills_.back();
      free_spills_.pop_back();
    }
    spills_[port.spill].assign(port.inline_flows.begin(), port.inline_flows.end());
  }
  spills_[port.spill].push_back(flow);
  ++port.size;
}

void EndpointSharing::erase_spilled(Port& port, FlowId flow) {
  auto& list = spills_[port.spill];
  *std::find(list.begin(), list.end(), flow) = list.back();
  list.pop_back();
  if (--port.size == 0) {
    free_spills_.push_back(port.spill);
    port.spill = kNoSpill;
  }
}

FlowId EndpointSharing::add(std::span<const PortId> ports, double duration_s, double now_s) {
  if (ports.empty()) throw std::invalid_argument("EndpointSharing::add: a flow needs at least one port");
  for (const PortId p : ports) {
    if (p >= ports_.size()) {
      throw std::invalid_argument(fmt::format("EndpointSharing::add: port {} of {}", p, ports_.size()));
    }
  }
  FlowId id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.ports.assign(ports.begin(), ports.end());
  f.remaining_s = duration_s;
  f.updated_s = now_s;
  f.rate = 0.0;
  f.speed = 1.0;
  f.finish_s = std::numeric_limits<double>::infinity();
  ++f.version;  // outdates whatever a previous flow in this slot left in a caller's heap
  f.live = true;
  f.seen = 0;  // (no walk's epoch: a walk this instant marks it if it reaches it)
  // A flow alone on every one of its ports is a component of its own (unless
  // a flow added later in this instant joins one of them, whose walk then
  // reaches it): its rate is its smallest port capacity, and no walk is needed.
  bool alone = true;
  double rate = 1.0;
  for (const PortId p : ports) {
    Port& port = ports_[p];
    alone = alone && port.size == 0;
    rate = std::min(rate, port.limit);
    push_flow(port, id);
  }
  if (alone) {
    alone_.push_back(Alone{id, rate});
  } else {
    dirty_ports_.insert(dirty_ports_.end(), ports.begin(), ports.end());
  }
  ++active_;
  return id;
}

void EndpointSharing::rate_alone(double now_s) {
  for (const Alone& a : alone_) {
    Flow& flow = flows_[a.flow];
    // Reached by this update's walk (another flow joined one of its ports, or
    // a port's capacity changed): rated there.
    if (!flow.live || (walked_ && flow.seen == epoch_) || flow.rate == a.rate) continue;
    flow.rate = a.rate;
    flow.finish_s = finish_at(now_s, flow.remaining_s, a.rate * flow.speed);
    ++flow.version;
    changed_.push_back(a.flow);
  }
  alone_.clear();
}

void EndpointSharing::remove(FlowId id, double now_s) {
  Flow& f = flows_[id];
  if (!f.live) throw std::logic_error(fmt::format("EndpointSharing::remove: flow {} is not running", id));
  // A port left with no flow has no rate to recompute: only those where
  // others still run are dirty.
  for (const PortId p : f.ports) {
    Port& port = ports_[p];
    erase_flow(port, id);
    if (port.size != 0) dirty_ports_.push_back(p);
  }
  f.live = false;
  f.remaining_s = 0.0;
  f.updated_s = now_s;
  ++f.version;
  free_flows_.push_back(id);
  --active_;
}

void EndpointSharing::set_capacity(PortId port, double capacity) {
  if (port >= ports_.size() || !(capacity >= 0.0 && capacity <= 1.0)) {
    throw std::invalid_argument(fmt::format("EndpointSharing::set_capacity: port {} of {}, capacity {}", port, ports_.size(), capacity));
  }
  ports_[port].limit = capacity;
  dirty_ports_.push_back(port);
}

void EndpointSharing::set_slowdown(FlowId id, double slowdown, double now_s) {
  Flow& f = flows_[id];
  if (!f.live) throw std::logic_error(fmt::format("EndpointSharing::set_slowdown: flow {} is not running", id));
  if (!(slowdown >= 1.0)) throw std::invalid_argument(fmt::format("EndpointSharing::set_slowdown: {}", slowdown));
  const double speed = 1.0 / slowdown;
  if (f.speed == speed) return;
  f.remaining_s = std::max(0.0, f.remaining_s - f.rate * f.speed * (now_s - f.updated_s));
  f.updated_s = now_s;
  f.speed = speed;
  slowed_.push_back(id);
}

void EndpointSharing::retime_slowed(double now_s) {
  // changed_ holds the flows recompute() moved: they have their new finishing
  // times, slowdown included.
  ++epoch_;
  for (const FlowId f : changed_) flows_[f].retimed = epoch_;
  for (const FlowId f : slowed_) {
    Flow& flow = flows_[f];
    if (!flow.live || flow.retimed == epoch_ || flow.finish_s <= now_s || flow.rate == 0.0) continue;
    flow.retimed = epoch_;
    flow.finish_s = finish_at(now_s, flow.remaining_s, flow.rate * flow.speed);
    ++flow.version;
    changed_.push_back(f);
  }
  slowed_.clear();
}

void EndpointSharing::recompute(double now_s) {
  changed_.clear();
  walked_ = !dirty_ports_.empty();
  if (!walked_) return;
  // The connected component of the changed ports: a breadth-first walk over
  // port -> flows on it -> their ports, marked with this update's epoch.
  ++epoch_;
  component_ports_.clear();
  component_flows_.clear();
  for (const PortId p : dirty_ports_) {
    if (walk_[p].seen == epoch_) continue;
    walk_[p].seen = epoch_;
    component_ports_.push_back(p);
  }
  dirty_ports_.clear();
  for (std::size_t i = 0; i < component_ports_.size(); ++i) {
    for (const FlowId f : flows_on(component_ports_[i])) {
      Flow& flow = flows_[f];
      if (flow.seen == epoch_) continue;
      flow.seen = epoch_;
      component_flows_.push_back(f);
      for (const PortId q : flow.ports) {
        if (walk_[q].seen == epoch_) continue;
        walk_[q].seen = epoch_;
        component_ports_.push_back(q);
      }
    }
  }
  fill(now_s);
}

void EndpointSharing::fill(double now_s) {
  // Bring every flow's remaining work to now; a flow due now keeps its rate
  // and finishing time and takes no part (it ends before time moves on).
  for (const FlowId f : component_flows_) {
    Flow& flow = flows_[f];
    flow.remaining_s = std::max(0.0, flow.remaining_s - flow.rate * flow.speed * (now_s - flow.updated_s));
    flow.updated_s = now_s;
    flow.frozen = flow.finish_s <= now_s;
  }
  // The common case, a flow with its ports to itself, at full speed (or
  // at its smallest port capacity).
  if (component_flows_.size() == 1) {
    Flow& flow = flows_[component_flows_.front()];
    double rate = 1.0;
    for (const PortId p : flow.ports) rate = std::min(rate, ports_[p].limit);
    if (!flow.frozen && flow.rate != rate) {
      flow.rate = rate;
      flow.finish_s = finish_at(now_s, flow.remaining_s, rate * flow.speed);
      ++flow.version;
      changed_.push_back(component_flows_.front());
    }
    return;
  }
  live_ports_.clear();
  for (const PortId p : component_ports_) {
    PortWalk& port = walk_[p];
    port.capacity = ports_[p].limit;
    port.unfrozen = 0;
    for (const FlowId f : flows_on(p)) port.unfrozen += flows_[f].frozen ? 0u : 1u;
    if (port.unfrozen > 0) live_ports_.push_back(p);
  }
  // Progressive filling: the ports offering the smallest equal share are the
  // bottlenecks of their unfrozen flows, which get that share and leave the
  // rest. Every port offering it is settled in the same round (freezing the
  // flows of one leaves the others' share unchanged); a port with no unfrozen
  // flow left drops out of the scan.
  while (!live_ports_.empty()) {
    double share = std::numeric_limits<double>::infinity();
    bottlenecks_.clear();
    for (std::size_t i = 0; i < live_ports_.size();) {
      const PortWalk& port = walk_[live_ports_[i]];
      if (port.unfrozen == 0) {
        live_ports_[i] = live_ports_.back();
        live_ports_.pop_back();
        continue;
      }
      const double s = port.capacity / port.unfrozen;
      if (s < share) {
        share = s;
        bottlenecks_.clear();
      }
      if (s == share) bottlenecks_.push_back(live_ports_[i]);
      ++i;
    }
    const double rate = std::clamp(share, 0.0, 1.0);
    for (const PortId b : bottlenecks_) {
      for (const FlowId f : flows_on(b)) {
        Flow& flow = flows_[f];
        if (flow.frozen) continue;
        flow.frozen = true;
        for (const PortId q : flow.ports) {
          walk_[q].capacity -= rate;
          --walk_[q].unfrozen;
        }
        if (rate == flow.rate) continue;
        flow.rate = rate;
        flow.finish_s = finish_at(now_s, flow.remaining_s, rate * flow.speed);
        ++flow.version;
        changed_.push_back(f);
      }
    }
  }
}

}  // namespace eppsim
