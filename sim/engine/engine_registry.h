#pragma once
// The simulated executors by name: `--engine NAME` and simulation.engine pick
// one here. Each engine registers its name, a one-line description and how it
// runs a Schedule; callers never branch on the name.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/cost_model.h"
#include "models/interference.h"
#include "models/topology/topology.h"
#include "sim/engine/engine_core.h"
#include "sim/engine/fault_plan.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim {

// Where the Schedule's ranks run, for engines that model the network
// themselves: each rank's node and chip (a vertex of the topology graph), and
// the cluster's topology, built on the first call (a run that never asks never
// pays for a large graph).
struct EnginePlacement {
  std::vector<std::uint32_t> node_of_rank;
  std::vector<VertexId> chip_of_rank;
  std::function<std::shared_ptr<const Topology>()> topology;
};

// What an engine may use besides the Schedule. The cost model prices ops; the
// placement is null when the caller has only a cost model (then an engine that
// needs the network throws std::invalid_argument).
// `faults` are the simulated faults to inject (fault_plan.h); null or empty:
// a healthy run. `interference`: compute and communication slowing each other
// while they overlap on a rank (models/interference.h); off when left empty
// (a scenario's cost model turns it on unless it says `enabled: false`).
// `shared_endpoints` false: the analytic engine gives every transfer and
// collective its uncontended time (the flow engine always shares its links).
// `trace`: what the trace keeps (engine_core.h): every op's event, those of
// some ranks (with every rank's busy figures), or, for runs that write no
// op-level output, only how long each rank's ops kept it busy (Trace.busy).
struct EngineContext {
  const CostModel& cost;
  const EnginePlacement* placement = nullptr;
  const FaultPlan* faults = nullptr;
  Interference interference = {};
  bool shared_endpoints = true;
  TraceSelection trace = {};
};

using EngineRun = std::function<proto::Trace(const proto::Schedule&, const EngineContext&)>;
using EngineMemory = std::function<std::uint64_t(const proto::Schedule&, const EngineContext&)>;

struct EngineInfo {
  std::string name;
  std::string description;  // one line, for usage texts
  EngineRun run;
  // The engine's state per op of the Schedule, besides the Schedule itself and
  // the trace (simulation_memory_bytes), for the memory guard's estimate
  // (docs/dev/memory-guard.md says how each engine's was set).
  std::uint64_t state_bytes_per_op = 0;
  // What the engine takes besides its state per op, for the same estimate (the
  // flow engine's SimGrid platform); empty: nothing.
  EngineMemory platform_bytes = {};
};

// Every registered engine, in name order.
std::span<const EngineInfo> engines();
std::vector<std::string> engine_names();

// The engine called `name`; an unknown name throws InputError
// "<where>: unknown engine 'NAME' (available: a, b)".
const EngineInfo& find_engine(std::string_view name, std::string_view where = "engine");

// find_engine(name).run(schedule, context).
proto::Trace run_engine(std::string_view name, const proto::Schedule& schedule, const EngineContext& context);

}  // namespace eppsim
