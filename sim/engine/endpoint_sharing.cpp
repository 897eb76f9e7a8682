#include "sim/engine/endpoint_sharing.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace eppsim {
namespace {

}  // namespace

void EndpointSharing::Flow::advance(double now_s) {
  const double elapsed = now_s - updated_s;
  const double in_latency = std::min(elapsed, latency_s);  // the latency runs first, at full speed
  latency_s -= in_latency;
  remaining_s = std::max(0.0, remaining_s - in_latency - rate * speed * (elapsed - in_latency));
  updated_s = now_s;
}

double EndpointSharing::Flow::finish_at(double now_s, double at_rate) const {
  if (!(at_rate > 0.0)) return std::numeric_limits<double>::infinity();
  return now_s + latency_s + std::max(0.0, remaining_s - latency_s) / at_rate;
}

EndpointSharing::EndpointSharing(std::size_t ports) : ports_(ports) {}

EndpointSharing::ClassId EndpointSharing::new_class(double limit) {
  ClassId c;
  if (free_classes_.empty()) {
    c = static_cast<ClassId>(classes_.size());
    classes_.emplace_back();
  } else {
    c = free_classes_.back();
    free_classes_.pop_back();
  }
  PortClass& k = classes_[c];
  k.flows.assign(class_flows_.begin(), class_flows_.end());
  k.limit = limit;
  k.ports = 0;
  for (const FlowId f : k.flows) flows_[f].classes.push_back(c);
  return c;
}

EndpointSharing::ClassId EndpointSharing::find_class(double limit) {
  // Such a class is among the classes of each of the flows: look through the
  // shortest list of them.
  FlowId probe = class_flows_.front();
  ++mark_stamp_;
  for (const FlowId f : class_flows_) {
    flows_[f].marked = mark_stamp_;
    if (flows_[f].classes.size() < flows_[probe].classes.size()) probe = f;
  }
  for (const ClassId c : flows_[probe].classes) {
    const PortClass& k = classes_[c];
    if (k.limit != limit || k.flows.size() != class_flows_.size() || k.ports == 0) continue;
    if (std::all_of(k.flows.begin(), k.flows.end(), [&](FlowId f) { return flows_[f].marked == mark_stamp_; })) return c;
  }
  return kNoClass;
}

void EndpointSharing::move_port(Port& port, ClassId to, FlowId sole) {
  if (port.of != kNoClass && --classes_[port.of].ports == 0) emptied_.push_back(port.of);
  port.of = to;
  port.sole = sole;
  if (to != kNoClass) ++classes_[to].ports;
}

void EndpointSharing::free_emptied(FlowId leaving) {
  for (const ClassId c : emptied_) {
    PortClass& k = classes_[c];
    for (const FlowId f : k.flows) {
      if (f == leaving) continue;
      std::vector<ClassId>& list = flows_[f].classes;
      *std::find(list.begin(), list.end(), c) = list.back();
      list.pop_back();
    }
    k.flows.clear();
    free_classes_.push_back(c);
  }
  emptied_.clear();
}

FlowId EndpointSharing::add(std::span<const PortId> ports, double duration_s, double now_s, double latency_s) {
  if (ports.empty()) throw std::invalid_argument("EndpointSharing::add: a flow needs at least one port");
  // The largest port, found without a branch a port (a collective's flow
  // holds two or four ports a member).
  PortId largest = 0;
  for (const PortId p : ports) largest = std::max(largest, p);
  if (largest >= ports_.size()) {
    throw std::invalid_argument(fmt::format("EndpointSharing::add: port {} of {}", largest, ports_.size()));
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
  f.classes.clear();
  f.remaining_s = duration_s;
  f.latency_s = std::clamp(latency_s, 0.0, duration_s);
  f.updated_s = now_s;
  f.rate = 0.0;
  f.speed = 1.0;
  f.finish_s = std::numeric_limits<double>::infinity();
  ++f.version;  // outdates whatever a previous flow in this slot left in a caller's heap
  f.live = true;
  f.seen = 0;  // (no walk's epoch: a walk this instant marks it if it reaches it)
  // Each port goes from its class to the class of the same flows and this
  // one, made once for all the ports of a class (or of a flow holding ports
  // alone); a port with no flow yet records this one, or at a lowered
  // capacity goes to the class of this flow alone at that capacity.
  ++move_stamp_;
  fresh_.clear();
  // A flow alone on every one of its ports is a component of its own (unless
  // a flow added later in this instant joins one of them, whose walk then
  // reaches it): its rate is its smallest port capacity, and no walk is needed.
  bool alone = true;
  double rate = 1.0;
  for (const PortId p : ports) {
    Port& port = ports_[p];
    rate = std::min(rate, port.limit);
    ClassId to = kNoClass;
    if (port.of == kNoClass && port.sole == kNoFlow) {
      if (port.limit == 1.0) {
        port.sole = id;
        continue;
      }
      for (const Fresh& fresh : fresh_) {
        if (fresh.limit == port.limit) to = fresh.to;
      }
      if (to == kNoClass) {
        class_flows_.assign(1, id);
        to = new_class(port.limit);
        fresh_.push_back(Fresh{port.limit, to});
      }
      move_port(port, to);
      continue;
    }
    alone = false;
    if (port.of == kNoClass) {
      Flow& other = flows_[port.sole];
      if (other.moved_at == move_stamp_) {
        to = other.moved_to;
      } else {
        class_flows_.assign({port.sole, id});
        to = new_class(1.0);
        other.moved_to = to;
        other.moved_at = move_stamp_;
        dirty_classes_.push_back(to);
      }
    } else if (classes_[port.of].moved_at == move_stamp_) {
      to = classes_[port.of].moved_to;
    } else {
      class_flows_.assign(classes_[port.of].flows.begin(), classes_[port.of].flows.end());
      class_flows_.push_back(id);
      to = new_class(classes_[port.of].limit);
      classes_[port.of].moved_to = to;
      classes_[port.of].moved_at = move_stamp_;
      // Its other flows' rates change: the walk starts from here.
      dirty_classes_.push_back(to);
    }
    move_port(port, to);
  }
  if (!emptied_.empty()) free_emptied(kNoFlow);
  if (alone) alone_.push_back(Alone{id, rate});
  ++active_;
  return id;
}

void EndpointSharing::rate_alone(double now_s) {
  for (const Alone& a : alone_) {
    Flow& flow = flows_[a.flow];
    // Reached by this update's walk (another flow joined one of its ports, or
    // a port's capacity changed): rated there.
    if (!flow.live || (walked_ && flow.seen == epoch_) || flow.rate == a.rate) continue;
    set_rate(a.flow, a.rate, now_s);
  }
  alone_.clear();
}

void EndpointSharing::remove(FlowId id, double now_s) {
  Flow& f = flows_[id];
  if (!f.live) throw std::logic_error(fmt::format("EndpointSharing::remove: flow {} is not running", id));
  // Each port goes from its class to the class of the same flows but this
  // one: one that exists already, or a new one; out of any class if one
  // flow is left at full capacity, or none. A port left with no flow has no
  // rate to recompute: only the classes and flows where others still run are
  // dirty.
  ++move_stamp_;
  for (const PortId p : f.ports) {
    Port& port = ports_[p];
    if (port.of == kNoClass) {
      port.sole = kNoFlow;
      continue;
    }
    PortClass& from = classes_[port.of];
    if (from.flows.size() == 1) {
      move_port(port, kNoClass);
      continue;
    }
    if (from.flows.size() == 2 && from.limit == 1.0) {
      const FlowId other = from.flows[0] == id ? from.flows[1] : from.flows[0];
      if (from.moved_at != move_stamp_) {
        from.moved_at = move_stamp_;
        dirty_flows_.push_back(other);
      }
      move_port(port, kNoClass, other);
      continue;
    }
    ClassId to;
    if (from.moved_at == move_stamp_) {
      to = from.moved_to;
    } else {
      class_flows_.clear();
      for (const FlowId other : from.flows) {
        if (other != id) class_flows_.push_back(other);
      }
      const double limit = from.limit;
      to = find_class(limit);
      if (to == kNoClass) to = new_class(limit);
      dirty_classes_.push_back(to);
      classes_[port.of].moved_to = to;
      classes_[port.of].moved_at = move_stamp_;
    }
    move_port(port, to);
  }
  // Every class of the flow held only ports of its own: all are empty now.
  if (!emptied_.empty()) free_emptied(id);
  f.classes.clear();
  f.live = false;
  f.remaining_s = 0.0;
  f.latency_s = 0.0;
  f.updated_s = now_s;
  ++f.version;
  free_flows_.push_back(id);
  --active_;
}

void EndpointSharing::set_capacity(PortId p, double capacity) {
  if (p >= ports_.size() || !(capacity >= 0.0 && capacity <= 1.0)) {
    throw std::invalid_argument(fmt::format("EndpointSharing::set_capacity: port {} of {}, capacity {}", p, ports_.size(), capacity));
  }
  Port& port = ports_[p];
  if (port.limit == capacity) return;
  port.limit = capacity;
  if (port.of == kNoClass && port.sole == kNoFlow) return;
  // The port leaves its class for that of the same flows at its new
  // capacity; a port one flow holds at full capacity needs none.
  if (port.of == kNoClass) {
    class_flows_.assign(1, port.sole);
  } else {
    class_flows_.assign(classes_[port.of].flows.begin(), classes_[port.of].flows.end());
    if (capacity == 1.0 && class_flows_.size() == 1) {
      move_port(port, kNoClass, class_flows_.front());
      free_emptied(kNoFlow);
      dirty_flows_.push_back(class_flows_.front());
      return;
    }
  }
  ClassId to = find_class(capacity);
  if (to == kNoClass) to = new_class(capacity);
  move_port(port, to);
  free_emptied(kNoFlow);
  dirty_classes_.push_back(to);
}

void EndpointSharing::set_slowdown(FlowId id, double slowdown, double now_s) {
  Flow& f = flows_[id];
  if (!f.live) throw std::logic_error(fmt::format("EndpointSharing::set_slowdown: flow {} is not running", id));
  if (!(slowdown >= 1.0)) throw std::invalid_argument(fmt::format("EndpointSharing::set_slowdown: {}", slowdown));
  const double speed = 1.0 / slowdown;
  if (f.speed == speed) return;
  f.advance(now_s);
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
    flow.finish_s = flow.finish_at(now_s, flow.rate * flow.speed);
    ++flow.version;
    changed_.push_back(f);
  }
  slowed_.clear();
}

void EndpointSharing::set_rate(FlowId f, double rate, double now_s) {
  Flow& flow = flows_[f];
  flow.rate = rate;
  flow.finish_s = flow.finish_at(now_s, rate * flow.speed);
  ++flow.version;
  changed_.push_back(f);
}

void EndpointSharing::reach(FlowId f) {
  Flow& flow = flows_[f];
  flow.seen = epoch_;
  component_flows_.push_back(f);
  for (const ClassId q : flow.classes) {
    if (classes_[q].seen == epoch_) continue;
    classes_[q].seen = epoch_;
    component_classes_.push_back(q);
  }
}

void EndpointSharing::recompute(double now_s) {
  changed_.clear();
  walked_ = !dirty_classes_.empty() || !dirty_flows_.empty();
  if (!walked_) return;
  // The connected component of the changed classes and flows: a breadth-first
  // walk over class -> flows in it -> their classes, marked with this update's
  // epoch. A class freed since it was made dirty holds no port and is passed
  // over, as is a flow removed since.
  ++epoch_;
  component_classes_.clear();
  component_flows_.clear();
  for (const FlowId f : dirty_flows_) {
    if (flows_[f].live && flows_[f].seen != epoch_) reach(f);
  }
  dirty_flows_.clear();
  for (const ClassId c : dirty_classes_) {
    PortClass& k = classes_[c];
    if (k.ports == 0 || k.seen == epoch_) continue;
    k.seen = epoch_;
    component_classes_.push_back(c);
  }
  dirty_classes_.clear();
  for (std::size_t i = 0; i < component_classes_.size(); ++i) {
    for (const FlowId f : classes_[component_classes_[i]].flows) {
      if (flows_[f].seen != epoch_) reach(f);
    }
  }
  fill(now_s);
}

void EndpointSharing::fill(double now_s) {
  // Bring every flow's remaining work to now; a flow due now keeps its rate
  // and finishing time and takes no part (it ends before time moves on).
  for (const FlowId f : component_flows_) {
    Flow& flow = flows_[f];
    flow.advance(now_s);
    flow.frozen = flow.finish_s <= now_s;
  }
  // The common case, a flow with its ports to itself, at full speed (or
  // at its smallest port capacity).
  if (component_flows_.size() == 1) {
    Flow& flow = flows_[component_flows_.front()];
    double rate = 1.0;
    for (const ClassId q : flow.classes) rate = std::min(rate, classes_[q].limit);
    if (!flow.frozen && flow.rate != rate) set_rate(component_flows_.front(), rate, now_s);
    return;
  }
  live_classes_.clear();
  for (const ClassId c : component_classes_) {
    PortClass& k = classes_[c];
    k.capacity = k.limit;
    k.unfrozen = 0;
    for (const FlowId f : k.flows) k.unfrozen += flows_[f].frozen ? 0u : 1u;
    if (k.unfrozen > 0) live_classes_.push_back(c);
  }
  // Progressive filling: the classes offering the smallest equal share are
  // the bottlenecks of their unfrozen flows, which get that share and leave
  // the rest. Every class offering it is settled in the same round (freezing
  // the flows of one leaves the others' share unchanged); a class with no
  // unfrozen flow left drops out of the scan.
  while (!live_classes_.empty()) {
    double share = std::numeric_limits<double>::infinity();
    bottlenecks_.clear();
    for (std::size_t i = 0; i < live_classes_.size();) {
      const PortClass& k = classes_[live_classes_[i]];
      if (k.unfrozen == 0) {
        live_classes_[i] = live_classes_.back();
        live_classes_.pop_back();
        continue;
      }
      const double s = k.capacity / k.unfrozen;
      if (s < share) {
        share = s;
        bottlenecks_.clear();
      }
      if (s == share) bottlenecks_.push_back(live_classes_[i]);
      ++i;
    }
    const double rate = std::clamp(share, 0.0, 1.0);
    for (const ClassId b : bottlenecks_) {
      for (const FlowId f : classes_[b].flows) {
        Flow& flow = flows_[f];
        if (flow.frozen) continue;
        flow.frozen = true;
        for (const ClassId q : flow.classes) {
          classes_[q].capacity -= rate;
          --classes_[q].unfrozen;
        }
        if (rate != flow.rate) set_rate(f, rate, now_s);
      }
    }
  }
  // A flow in no class (alone at each of its ports, at full capacity) runs at full speed.
  for (const FlowId f : component_flows_) {
    if (!flows_[f].frozen && flows_[f].rate != 1.0) set_rate(f, 1.0, now_s);
  }
}

}  // namespace eppsim
