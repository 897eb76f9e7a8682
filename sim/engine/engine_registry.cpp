#include "sim/engine/engine_registry.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"
#include "sim/engine/analytic_engine.h"
#include "sim/engine/flow_engine.h"
#include "sim/engine/flow_memory.h"

namespace eppsim {
namespace {

// EngineInfo::state_bytes_per_op (docs/dev/memory-guard.md): each engine's
// measured on step_16k (the flow engine's in its forked child, besides its
// SimGrid platform: flow_platform_memory_bytes).
constexpr std::uint64_t kAnalyticStateBytesPerOp = 26;
constexpr std::uint64_t kFlowStateBytesPerOp = 48;

// The table of engines: a new engine adds its entry here (kept in name order).
std::vector<EngineInfo> make_engines() {
  std::vector<EngineInfo> list;
  list.push_back({"analytic",
                  "event-driven, closed-form communication over the placement's links, sharing each rank's "
                  "NIC and NVLink ports",
                  [](const proto::Schedule& schedule, const EngineContext& context) {
                    AnalyticEngineOptions options;
                    if (context.placement != nullptr) options.node_of_rank = context.placement->node_of_rank;
                    options.faults = context.faults;
                    options.interference = context.interference;
                    options.share_endpoints = context.shared_endpoints;
                    options.trace = context.trace;
                    return run_analytic(schedule, context.cost, options);
                  },
                  kAnalyticStateBytesPerOp});
  list.push_back({"flow", "SimGrid flows sharing the topology's links max-min fairly (contention; needs the placement)",
                  [](const proto::Schedule& schedule, const EngineContext& context) {
                    if (!context.shared_endpoints) {
                      throw InputError("simulation.shared_endpoints: false is the analytic engine's; the flow engine "
                                       "always shares its links (use --engine analytic, or remove it)");
                    }
                    return run_flow(schedule, context);
                  },
                  kFlowStateBytesPerOp, flow_platform_memory_bytes});
  std::sort(list.begin(), list.end(), [](const EngineInfo& a, const EngineInfo& b) { return a.name < b.name; });
  return list;
}

}  // namespace

std::span<const EngineInfo> engines() {
  static const std::vector<EngineInfo> list = make_engines();
  return list;
}

std::vector<std::string> engine_names() {
  std::vector<std::string> names;
  for (const auto& e : engines()) names.push_back(e.name);
  return names;
}

const EngineInfo& find_engine(std::string_view name, std::string_view where) {
  for (const auto& e : engines()) {
    if (e.name == name) return e;
  }
  throw InputError(fmt::format("{}: unknown engine '{}' (available: {})", where, name, fmt::join(engine_names(), ", ")));
}

proto::Trace run_engine(std::string_view name, const proto::Schedule& schedule, const EngineContext& context) {
  return find_engine(name).run(schedule, context);
}

}  // namespace eppsim
