#include "sim/sweep/sweep_point.h"

#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/interrupt.h"
#include "base/peak_rss.h"
#include "base/proto_io.h"
#include "scenario/scenario.h"
#include "sim/run.h"
#include "sim/topo.h"

namespace eppsim {

void run_sweep_point(const SweepPlan& plan, std::uint32_t index, const SweepOptions& options) {
  if (index >= plan.points.size())
    throw InputError(fmt::format("{}: --point {}: the sweep has {} points", plan.file.string(), index, plan.points.size()));
  const SweepPointSpec& point = plan.points[index];
  const EffectivePoint effective = effective_point(plan, point);
  proto::SweepPoint record = sweep_point_record(plan, point, effective.key);
  const auto start = std::chrono::steady_clock::now();
  if (!effective.error.empty()) {
    record.set_error(effective.error);
  } else {
    try {
      const RunOutputs outputs = parse_run_outputs(options.outputs);
      const bool run_directory = options.outputs != "none";
      const ParsedScenario parsed = parse_scenario_file(plan.bases[point.base].file, point.overrides);
      if (plan.sweep.command() == "topo") {
        proto::TopologyReport topology = run_topology_study(resolve_cluster_part(parsed));
        topology.clear_build_time_s();  // wall clock: results hold none
        for (auto& comparison : *topology.mutable_comparisons()) comparison.clear_build_time_s();
        if (run_directory) write_topology_report(topology, options.output / "runs" / effective.key);
        *record.mutable_topology() = std::move(topology);
      } else {
        const RunResult result = run_scenario(resolve_full(parsed), outputs.trace_detail());
        *record.mutable_report() = result.report;
        if (run_directory) write_run_directory(result, options.output / "runs" / effective.key, outputs);
      }
    } catch (const Interrupted&) {
      throw;  // stopped, not failed: a rerun runs it again
    } catch (const InputError& e) {
      record.set_error(e.what());
    } catch (const std::exception& e) {
      record.set_error(fmt::format("failure: {}", e.what()));
    }
  }
  record.set_wall_s(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  record.set_peak_rss_bytes(peak_rss_bytes());
  write_message(record, sweep_point_file(options.output, effective.key));
}

}  // namespace eppsim
