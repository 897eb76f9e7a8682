#include "scenario/scenario_faults.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/errors.h"

namespace eppsim {
namespace {

// "A-B" of two vertex names, as cluster.failures.links.
std::pair<std::string, std::string> parse_link(const std::string& text, const std::string& path, const FieldLocator& where) {
  const auto dash = text.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == text.size() || text.find('-', dash + 1) != std::string::npos) {
    where.fail(path, fmt::format("must be \"A-B\" with the two vertex names of topology.json, e.g. \"chip3-leaf0\", got {}",
                                 quote_string(text)));
  }
  return {text.substr(0, dash), text.substr(dash + 1)};
}

}  // namespace

std::string_view fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::Straggler: return "straggler";
    case FaultKind::LinkDegraded: return "link_degraded";
    case FaultKind::LinkFailure: return "link_failure";
    case FaultKind::NodeFailure: return "node_failure";
  }
  return "unknown";
}

std::string FaultSpec::path() const { return fmt::format("faults[{}]", index); }
std::string FaultSpec::kind_path() const { return fmt::format("{}.{}", path(), fault_kind_name(kind)); }

std::string FaultSpec::description() const {
  switch (kind) {
    case FaultKind::Straggler: return fmt::format("rank {} computes {:g}x slower", rank, factor);
    case FaultKind::LinkDegraded:
      return fmt::format("link {}-{} at {:g}% of its bandwidth", link.first, link.second, 100.0 * factor);
    case FaultKind::LinkFailure: return fmt::format("link {}-{} fails", link.first, link.second);
    case FaultKind::NodeFailure: return fmt::format("node {} fails", node);
  }
  return {};
}

std::vector<FaultSpec> resolve_faults(const proto::Scenario& scenario, const ClusterSpec& cluster,
                                      const std::vector<std::uint32_t>& failed_nodes, const FieldLocator& where) {
  if (scenario.faults_size() > kMaxFaults) {
    where.fail("faults", fmt::format("at most {} faults, got {}", kMaxFaults, scenario.faults_size()));
  }
  std::vector<FaultSpec> faults;
  faults.reserve(static_cast<std::size_t>(scenario.faults_size()));
  for (int i = 0; i < scenario.faults_size(); ++i) {
    const proto::Fault& f = scenario.faults(i);
    FaultSpec spec;
    spec.index = static_cast<std::size_t>(i);
    const std::string path = spec.path();
    switch (f.fault_case()) {
      case proto::Fault::kStraggler: spec.kind = FaultKind::Straggler; break;
      case proto::Fault::kLinkDegraded: spec.kind = FaultKind::LinkDegraded; break;
      case proto::Fault::kLinkFailure: spec.kind = FaultKind::LinkFailure; break;
      case proto::Fault::kNodeFailure: spec.kind = FaultKind::NodeFailure; break;
      case proto::Fault::FAULT_NOT_SET:
        where.fail(path, "must set one fault: straggler, link_degraded, link_failure or node_failure");
    }
    if (f.at().empty()) where.fail(path + ".at", "must be set: the simulated time the fault strikes, e.g. \"20ms\"");
    try {
      spec.at = parse_seconds(f.at());
    } catch (const InputError& e) {
      where.fail(path + ".at", e.what());
    }
    if (!(spec.at.value >= 0.0) || !(spec.at.value <= kMaxFaultTime_s)) {
      where.fail(path + ".at", fmt::format("must be a time in [0 s, {:g} s], got {}", kMaxFaultTime_s, quote_string(f.at())));
    }
    const std::string kind = spec.kind_path();
    switch (spec.kind) {
      case FaultKind::Straggler:
        spec.rank = f.straggler().rank();
        spec.factor = f.straggler().slowdown();
        if (!(spec.factor >= 1.0) || !std::isfinite(spec.factor)) {
          where.fail(kind + ".slowdown", fmt::format("must be a finite factor >= 1 (2 = twice as slow), got {:g}", spec.factor));
        }
        break;
      case FaultKind::LinkDegraded:
        spec.link = parse_link(f.link_degraded().link(), kind + ".link", where);
        spec.factor = f.link_degraded().bandwidth_factor();
        if (!(spec.factor > 0.0 && spec.factor <= 1.0)) {
          where.fail(kind + ".bandwidth_factor",
                     fmt::format("must be in (0, 1] (the fraction of bandwidth left; a dead link is link_failure), got {:g}",
                                 spec.factor));
        }
        break;
      case FaultKind::LinkFailure: spec.link = parse_link(f.link_failure().link(), kind + ".link", where); break;
      case FaultKind::NodeFailure:
        spec.node = f.node_failure().node();
        if (spec.node >= cluster.nodes) {
          where.fail(kind + ".node", fmt::format("node {} does not exist (the cluster has {} nodes)", spec.node, cluster.nodes));
        }
        if (std::find(failed_nodes.begin(), failed_nodes.end(), spec.node) != failed_nodes.end()) {
          where.fail(kind + ".node",
                     fmt::format("node {} is already down before the run (cluster.failures.nodes): nothing runs there",
                                 spec.node));
        }
        break;
    }
    faults.push_back(std::move(spec));
  }
  return faults;
}

}  // namespace eppsim
