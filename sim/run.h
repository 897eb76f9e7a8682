#pragma once
// The main flow as a library: scenario -> planner -> Schedule -> engine -> Trace
// -> Report, and the run directory that holds the results.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/peak_rss.h"
#include "proto/report.pb.h"
#include "scenario/scenario.h"
#include "sim/trace_ranks.h"
#include "proto/scenario.pb.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim {

// What a run's trace holds: the op events (Trace.op_events) of the ranks
// `ranks` selects (sim/trace_ranks.h), or, without `op_events`, only how long
// each rank's ops kept it busy (Trace.busy), which is all the report needs:
// for runs that write no op-level output, whose traces at 16,384 GPUs would
// take gigabytes they never use.
struct TraceDetail {
  bool op_events = true;
  TraceRanks ranks = {};
  static TraceDetail summary() { return {false, {}}; }
  bool operator==(const TraceDetail&) const = default;
};

struct PlannedBatch {
  proto::Schedule schedule;
  std::vector<std::uint64_t> lengths;  // the sampled batch's sequence lengths (tokens); empty for a collective benchmark
  double plan_time_s = 0.0;
};

struct RunResult {
  proto::Scenario scenario;  // the effective scenario (after --set): scenario.textproto
  proto::Schedule schedule;
  proto::Trace trace;
  proto::Report report;
  // The sampled batch's sequence lengths in tokens, in sampling order (lengths.csv);
  // empty when the run planned no batch (`eppsim sim`, a collective benchmark).
  std::vector<std::uint64_t> lengths;
  // Wall-clock seconds: for the console and timings.json only (report.json
  // holds no timings, so that the same inputs give the same report).
  double plan_time_s = 0.0;
  double simulation_time_s = 0.0;
  // The memory guard's estimate of the simulation's peak (base/memory_limit.h).
  std::uint64_t estimated_peak_bytes = 0;
};

// The step time in seconds of `schedule` run by the scenario's engine and cost
// model: the ScheduleEvaluator (sim/plan/planner.h) that planners score
// candidate plans with. The run keeps no op events (TraceDetail::Summary).
double simulated_step_seconds(const proto::Schedule& schedule, const ResolvedScenario& scenario);

// Samples the scenario's global batch and plans it with the scenario's strategy.
PlannedBatch plan_scenario(const ResolvedScenario& scenario);

// Runs `schedule` on the scenario's cluster with the scenario's engine and cost
// model; `plan_time_s` is passed through to the result. A bad input found while
// simulating (e.g. a simulated time that cannot be represented) is an
// InputError naming `schedule_source`, the file the schedule came from
// (default: the scenario's file, which it was planned from). A run with
// simulated faults keeps op events whatever `detail` says (those of the
// ranks it selects): its trace is where a stopped step shows what finished.
RunResult simulate_schedule(proto::Schedule schedule, const ResolvedScenario& cluster, double plan_time_s,
                            std::string_view schedule_source = {}, const TraceDetail& detail = {});

// The scenario `eppsim sim` simulates `schedule` on: the cluster and cost model of
// `parsed`, with the model the schedule's header names (a schedule without a
// header keeps the scenario's model). `schedule_source` names the schedule's
// file in errors.
ResolvedScenario cluster_for_schedule(ParsedScenario parsed, const proto::Schedule& schedule,
                                      std::string_view schedule_source);

// plan_scenario + simulate_schedule.
RunResult run_scenario(const ResolvedScenario& scenario, const TraceDetail& detail = {});

// The heavy files of a run directory, each of which a run may skip (a 16K-GPU
// trace is gigabytes). report.json, scenario.textproto, ranks.csv, lengths.csv
// and timings.json are always written.
// Past this many op events, a run directory's viewer trace is trace.pftrace,
// Perfetto's own format (traces/perfetto_trace.h), instead of the Chrome JSON
// trace.json: a JSON trace of millions of ops does not open in Perfetto's UI.
inline constexpr int kMaxChromeTraceEvents = 1'000'000;

// The viewer trace's file name for `trace`: trace.json or trace.pftrace (above).
std::string viewer_trace_file(const proto::Trace& trace);

struct RunOutputs {
  bool trace = true;     // trace.pb
  bool chrome = true;    // trace.json, or trace.pftrace past kMaxChromeTraceEvents
  bool csv = true;       // ops.csv, memory.csv
  bool schedule = true;  // schedule.pb
  TraceRanks trace_ranks = {};  // whose op events those files hold (--trace-ranks)
  // The trace a run needs for these files: op events for trace.pb,
  // trace.json and ops.csv, else the summary.
  TraceDetail trace_detail() const { return trace || chrome || csv ? TraceDetail{true, trace_ranks} : TraceDetail::summary(); }
};

// `--outputs` text: "all", "none" or a comma-separated list of trace, chrome,
// csv, schedule. Throws InputError naming the option and the known names.
RunOutputs parse_run_outputs(std::string_view list);
// The file names written for `outputs` and `trace`, for messages.
std::vector<std::string> run_output_files(const RunOutputs& outputs, const proto::Trace& trace);

// Writes report.json, scenario.textproto, ranks.csv, lengths.csv (the
// sampled lengths; a header alone when the run sampled none), the selected heavy files
// (trace.pb, trace.json (Chrome trace; trace.pftrace past kMaxChromeTraceEvents),
// ops.csv, memory.csv, schedule.pb) and,
// last, timings.json (the result's times, the time taken to write the others
// and the process's peak resident set) into `dir`, the large ones streamed.
// The directory is replaced as a whole (sim/output_directory.h): it never
// mixes two runs, and a failed run leaves the previous one as it was.
void write_run_directory(const RunResult& result, const std::filesystem::path& dir, const RunOutputs& outputs = {});

// A few lines for people: what the planner decided, step time, throughput,
// MFU, breakdown, memory.
std::string human_summary(const RunResult& result);

}  // namespace eppsim
