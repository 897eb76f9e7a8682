// One measurement of scripts/bench.py, in a process of its own so that its
// peak resident set is its own: plans the scenario (after --set overrides),
// runs the scenario's engine on the Schedule once, as a run that writes no
// op-level output does (the trace holding each rank's busy times, not every
// op's event: sim/run.h TraceDetail::summary()), and prints one JSON object
// on stdout: ranks, ops, plan and engine wall times, engine ops per second,
// the simulated step (and a collective benchmark's time) and the peak RSS.
// Writes no run directory: output writing is measured by `eppsim run`.
// With --plan-only it stops after planning (no engine fields).
//
//   eppsim_speed_probe SCENARIO [--plan-only] [--set FIELD=VALUE]...
//   eppsim_speed_probe --engines      the registered engines, one per line
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <google/protobuf/struct.pb.h>

#include "base/errors.h"
#include "base/peak_rss.h"
#include "sim/engine/engine_registry.h"
#include "sim/run.h"
#include "schedule/program_ops.h"
#include "base/proto_io.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int probe(const std::string& scenario_file, const std::vector<std::string>& overrides, bool plan_only) {
  using namespace eppsim;
  const auto scenario = load_scenario(scenario_file, overrides);
  const auto planned = plan_scenario(scenario);
  const std::uint64_t ops = op_count(planned.schedule);
  // A Struct written by the proto JSON printer: strings escaped, numbers as numbers.
  google::protobuf::Struct out;
  auto& fields = *out.mutable_fields();
  fields["scenario"].set_string_value(scenario.proto.name());
  fields["strategy"].set_string_value(scenario.plan.strategy);
  fields["ranks"].set_number_value(planned.schedule.num_ranks());
  fields["ops"].set_number_value(static_cast<double>(ops));
  fields["plan_time_s"].set_number_value(planned.plan_time_s);
  if (!plan_only) {
    const auto start = std::chrono::steady_clock::now();
    const double step_s = simulated_step_seconds(planned.schedule, scenario);
    const double engine_s = seconds_since(start);
    fields["engine"].set_string_value(scenario.simulation.engine);
    fields["engine_time_s"].set_number_value(engine_s);
    fields["ops_per_s"].set_number_value(engine_s > 0 ? std::round(static_cast<double>(ops) / engine_s) : 0.0);
    fields["step_time_s"].set_number_value(step_s);
    if (scenario.workload.collective) fields["collective_time_s"].set_number_value(step_s / scenario.workload.collective->iterations);
  }
  fields["peak_rss_bytes"].set_number_value(peak_rss_bytes());
  fields["peak_rss_forked_bytes"].set_number_value(peak_rss_of_children_bytes());
  std::fputs(to_json(out).c_str(), stdout);
  std::fputs("\n", stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 1 && args[0] == "--engines") {
      for (const auto& name : eppsim::engine_names()) std::printf("%s\n", name.c_str());
      return 0;
    }
    const char* usage = "usage: eppsim_speed_probe SCENARIO [--plan-only] [--set FIELD=VALUE]...";
    std::vector<std::string> overrides;
    bool plan_only = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--plan-only") {
        plan_only = true;
      } else if (args[i] == "--set" && i + 1 < args.size()) {
        overrides.push_back(args[++i]);
      } else {
        throw eppsim::InputError(usage);
      }
    }
    if (args.empty() || args[0].starts_with("-")) throw eppsim::InputError(usage);
    return probe(args[0], overrides, plan_only);
  } catch (const eppsim::InputError& e) {
    std::fprintf(stderr, "eppsim_speed_probe: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eppsim_speed_probe: failure: %s\n", e.what());
    return 1;
  }
}
