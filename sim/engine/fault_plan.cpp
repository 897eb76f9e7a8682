#include "sim/engine/fault_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"
#include "sim/engine/engine_registry.h"

namespace eppsim {
namespace {

constexpr std::size_t kMaxRanksNamed = 16;

std::string rank_list(const std::vector<std::uint32_t>& ranks) {
  if (ranks.size() <= kMaxRanksNamed) return fmt::format("{}", fmt::join(ranks, ", "));
  return fmt::format("{}, ... ({} ranks)", fmt::join(ranks.begin(), ranks.begin() + kMaxRanksNamed, ", "), ranks.size());
}

// The ranks whose chips cannot reach rank 0's chip over the topology's live
// links less `down`.
std::vector<std::uint32_t> cut_off_ranks(const Topology& topology, const std::vector<bool>& down,
                                         std::span<const VertexId> chip_of_rank, std::uint32_t ranks) {
  if (ranks == 0) return {};
  std::vector<char> seen(topology.vertex_count(), 0);
  std::vector<VertexId> queue{chip_of_rank[0]};
  seen[chip_of_rank[0]] = 1;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    for (const auto& [next, link] : topology.neighbors(queue[i])) {
      if (down[link] || seen[next]) continue;
      seen[next] = 1;
      queue.push_back(next);
    }
  }
  std::vector<std::uint32_t> cut;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    if (!seen[chip_of_rank[r]]) cut.push_back(r);
  }
  return cut;
}

}  // namespace

FaultPlan::FaultPlan(std::vector<EngineFault> faults, std::vector<EndpointCapacity> endpoints, std::uint32_t ranks)
    : faults_(std::move(faults)), endpoints_(std::move(endpoints)), slowdown_(ranks) {
  std::stable_sort(faults_.begin(), faults_.end(), [](const EngineFault& a, const EngineFault& b) { return a.at_s < b.at_s; });
  std::stable_sort(endpoints_.begin(), endpoints_.end(),
                   [](const EndpointCapacity& a, const EndpointCapacity& b) { return a.at_s < b.at_s; });
  for (const EngineFault& f : faults_) {
    if (f.spec.kind == FaultKind::Straggler) slowdown_[f.spec.rank].emplace_back(f.at_s, f.spec.factor);
  }
}

const EngineFault* FaultPlan::first_fatal() const {
  for (const EngineFault& f : faults_) {
    if (f.fatal) return &f;
  }
  return nullptr;
}

double FaultPlan::compute_time_s(std::uint32_t rank, double start_s, double duration_s) const {
  if (rank >= slowdown_.size() || slowdown_[rank].empty()) return duration_s;
  const auto& points = slowdown_[rank];
  // The factor in force at start_s, then segment by segment: `work` is the
  // full-speed time left, a segment of length L at factor s does L / s of it.
  double factor = 1.0;
  std::size_t next = 0;
  while (next < points.size() && points[next].first <= start_s) factor = points[next++].second;
  double t = start_s;
  double work = duration_s;
  for (;; ++next) {
    const double until = next < points.size() ? points[next].first : std::numeric_limits<double>::infinity();
    if (work * factor <= until - t) return t + work * factor - start_s;
    work -= (until - t) / factor;
    t = until;
    factor = points[next].second;
  }
}

double FaultPlan::compute_work_s(std::uint32_t rank, double from_s, double to_s) const {
  if (rank >= slowdown_.size() || slowdown_[rank].empty()) return to_s - from_s;
  const auto& points = slowdown_[rank];
  double factor = 1.0;
  std::size_t next = 0;
  while (next < points.size() && points[next].first <= from_s) factor = points[next++].second;
  double work = 0.0;
  for (double t = from_s;; ++next) {
    const double until = next < points.size() ? std::min(points[next].first, to_s) : to_s;
    work += (until - t) / factor;
    if (until >= to_s) return work;
    t = until;
    factor = points[next].second;
  }
}

FaultPlan make_fault_plan(std::span<const FaultSpec> specs, std::uint32_t ranks, const EnginePlacement& placement,
                          const FieldLocator& where) {
  std::vector<const FaultSpec*> ordered;
  bool needs_topology = false;
  for (const FaultSpec& f : specs) {
    ordered.push_back(&f);
    needs_topology |= f.kind == FaultKind::LinkDegraded || f.kind == FaultKind::LinkFailure;
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const FaultSpec* a, const FaultSpec* b) { return a->at.value < b->at.value; });
  std::shared_ptr<const Topology> topology = needs_topology ? placement.topology() : nullptr;
  std::vector<bool> down;  // links failed by faults so far (time order)
  std::vector<double> factor;  // bandwidth factor of each link so far
  if (topology) {
    down.assign(topology->links().size(), false);
    factor.assign(topology->links().size(), 1.0);
  }
  std::vector<EngineFault> faults;
  std::vector<EndpointCapacity> endpoints;
  for (const FaultSpec* spec : ordered) {
    EngineFault f;
    f.spec = *spec;
    f.at_s = spec->at.value;
    switch (spec->kind) {
      case FaultKind::Straggler:
        if (spec->rank >= ranks) {
          where.fail(spec->kind_path() + ".rank",
                     fmt::format("rank {} does not exist (the schedule has {} ranks)", spec->rank, ranks));
        }
        f.ranks.push_back(spec->rank);
        break;
      case FaultKind::NodeFailure: {
        for (std::uint32_t r = 0; r < ranks; ++r) {
          if (placement.node_of_rank[r] == spec->node) f.ranks.push_back(r);
        }
        f.fatal = !f.ranks.empty();
        f.reason = fmt::format("{} at {}: its ranks {} stop", spec->description(), format_seconds(spec->at), rank_list(f.ranks));
        break;
      }
      case FaultKind::LinkDegraded:
      case FaultKind::LinkFailure: {
        const std::string path = spec->kind_path() + ".link";
        VertexId a = 0, b = 0;
        try {
          a = topology->vertex_by_name(spec->link.first);
          b = topology->vertex_by_name(spec->link.second);
        } catch (const InputError& e) {
          where.fail(path, e.what());
        }
        const auto link = topology->find_live_link(a, b);
        if (!link) {
          where.fail(path, fmt::format("no live link joins {} and {} in topology '{}' (names as topology.json lists them)",
                                       spec->link.first, spec->link.second, topology->name()));
        }
        f.link = *link;
        if (spec->kind == FaultKind::LinkFailure) {
          down[f.link] = true;
          factor[f.link] = 0.0;
        } else if (!down[f.link]) {
          factor[f.link] = spec->factor;
        }
        for (const VertexId end : {a, b}) {
          if (end >= topology->chips()) continue;
          // The chip's remaining share of the bandwidth of its links of this class.
          const bool nic = !topology->link(f.link).intra_node;
          double total = 0.0, left = 0.0;
          for (const auto& [next, l] : topology->neighbors(end)) {
            (void)next;
            if (topology->link(l).intra_node == nic) continue;
            total += topology->link(l).bandwidth.value;
            left += topology->link(l).bandwidth.value * factor[l];
          }
          const double capacity = total > 0.0 ? left / total : 0.0;
          for (std::uint32_t r = 0; r < ranks; ++r) {
            if (placement.chip_of_rank[r] != end) continue;
            f.ranks.push_back(r);
            endpoints.push_back(EndpointCapacity{f.at_s, r, nic, capacity});
          }
        }
        std::sort(f.ranks.begin(), f.ranks.end());
        f.ranks.erase(std::unique(f.ranks.begin(), f.ranks.end()), f.ranks.end());
        if (spec->kind == FaultKind::LinkFailure) {
          const auto cut = cut_off_ranks(*topology, down, placement.chip_of_rank, ranks);
          if (!cut.empty()) {
            f.fatal = true;
            f.reason = fmt::format("{} at {}: ranks {} can no longer reach rank 0", spec->description(),
                                   format_seconds(spec->at), rank_list(cut));
          }
        }
        break;
      }
    }
    faults.push_back(std::move(f));
  }
  return FaultPlan(std::move(faults), std::move(endpoints), ranks);
}

std::string stall_reason(const FaultPlan& plan, double stopped_s) {
  std::vector<std::string> struck;
  for (const EngineFault& f : plan.faults()) {
    if (f.at_s > stopped_s) break;
    if (f.spec.kind == FaultKind::LinkFailure) {
      struck.push_back(fmt::format("{} at {}", f.spec.description(), format_seconds(f.spec.at)));
    }
  }
  if (struck.empty()) return {};
  return fmt::format("transfers stalled on failed links and nothing else could run ({})", fmt::join(struck, "; "));
}

}  // namespace eppsim
