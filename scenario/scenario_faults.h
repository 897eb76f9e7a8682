#pragma once
// The scenario's simulated faults (scenario.proto's `faults`), checked and
// resolved into typed specs. What can be checked from the scenario alone is
// checked here (a fault kind is set, `at` is a duration, factors in range, the
// node exists and is not already failed, the link is written "A-B"); the rank
// of a straggler and the link's existence need the schedule and the topology
// and are checked where the engine's faults are built
// (sim/engine/fault_plan.h), through the same FieldLocator paths.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/cluster_spec.h"
#include "base/units.h"
#include "scenario/field_locator.h"
#include "proto/scenario.pb.h"

namespace eppsim {

enum class FaultKind : std::uint8_t { Straggler, LinkDegraded, LinkFailure, NodeFailure };

// "straggler", "link_degraded", "link_failure", "node_failure": the scenario's field names.
std::string_view fault_kind_name(FaultKind kind);

// Latest `at` accepted: far beyond any step, and far inside the int64
// nanoseconds traces keep time in.
inline constexpr double kMaxFaultTime_s = 1e6;
// Most faults a scenario may list (checked before any is resolved).
inline constexpr int kMaxFaults = 10000;

struct FaultSpec {
  std::size_t index = 0;  // position in scenario.faults
  FaultKind kind = FaultKind::Straggler;
  Seconds at;
  std::uint32_t rank = 0;  // Straggler
  // Straggler: slowdown (>= 1); LinkDegraded: bandwidth factor in (0, 1];
  // LinkFailure and NodeFailure: 0.
  double factor = 0.0;
  std::uint32_t node = 0;                      // NodeFailure
  std::pair<std::string, std::string> link;    // link faults: the two vertex names

  // "faults[2]" and "faults[2].straggler": the field paths errors name.
  std::string path() const;
  std::string kind_path() const;
  // For people: "rank 3 computes 1.5x slower", "link chip3-leaf0 at 25% bandwidth",
  // "link chip3-leaf0 fails", "node 1 fails".
  std::string description() const;
};

// scenario.faults, in scenario order. `failed_nodes` are cluster.failures.nodes.
std::vector<FaultSpec> resolve_faults(const proto::Scenario& scenario, const ClusterSpec& cluster,
                                      const std::vector<std::uint32_t>& failed_nodes, const FieldLocator& where);

}  // namespace eppsim
