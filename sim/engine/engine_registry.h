#pragma once
// The simulated executors by name: `--engine NAME` and simulation.engine pick
// one here. Each engine registers its name, a one-line description and how it
// runs a Schedule; callers never branch on the name.
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/cost_model.h"
#include "traces/schedule.pb.h"
#include "traces/trace.pb.h"

namespace eppsim {

// What an engine may use besides the Schedule. The cost model prices ops; an
// engine that models the network itself (the flow engine) will find the
// topology and placement here too.
struct EngineContext {
  const CostModel& cost;
};

using EngineRun = std::function<proto::Trace(const proto::Schedule&, const EngineContext&)>;

struct EngineInfo {
  std::string name;
  std::string description;  // one line, for usage texts
  EngineRun run;
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
