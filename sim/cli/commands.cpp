#include "sim/cli/commands.h"

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"
#include "base/index_list.h"
#include "base/input_limits.h"
#include "base/log.h"
#include "base/proto_io.h"
#include "sim/calibrate.h"
#include "sim/calibration_check.h"
#include "sim/cli/command_options.h"
#include "sim/cli/presets.h"
#include "sim/compare.h"
#include "sim/engine/engine_registry.h"
#include "sim/html_report.h"
#include "sim/output_directory.h"
#include "sim/plan/planner.h"
#include "sim/replay.h"
#include "sim/run.h"
#include "sim/sweep/sweep_command.h"
#include "sim/sweep/sweep_file.h"
#include "sim/testbed.h"
#include "sim/topo.h"
#include "sim/trace_diff.h"
#include "sim/validate.h"
#include "scenario/scenario.h"
#include "schedule/identical_replicas.h"
#include "schedule/schedule_file.h"
#include "schedule/trace_file.h"
#include "traces/chakra/chakra_export.h"
#include "traces/chrome_trace.h"
#include "traces/perfetto_trace.h"
#include "traces/rank_timeline.h"
#include "traces/trace_report.h"

namespace fs = std::filesystem;

namespace eppsim {
namespace {

// Held for the whole of a command that writes --output (sim/output_directory.h).
OutputLock lock_output(const po::variables_map& vars) { return OutputLock(vars["output"].as<std::string>()); }

// `outputs` is read before the run (outputs_from), so that a bad --outputs fails
// before a long plan and simulation rather than after them.
int finish_run(const RunResult& result, const RunOutputs& outputs, const po::variables_map& vars) {
  const fs::path out = vars["output"].as<std::string>();
  write_run_directory(result, out, outputs);
  std::cout << human_summary(result);
  std::cout << fmt::format("  wrote        {}/{{{}}}\n", out.string(), fmt::join(run_output_files(outputs, result.trace), ", "));
  if (vars.count("html") && vars["html"].as<bool>()) {
    std::cout << fmt::format("  page         {}\n", write_html_report(out).string());
  }
  return 0;
}

int command_run(const po::variables_map& vars) {
  const auto lock = lock_output(vars);
  const RunOutputs outputs = outputs_from(vars);
  const auto scenario = load_scenario(vars["scenario"].as<std::string>(), overrides_from(vars));
  return finish_run(run_scenario(scenario, outputs.trace_detail()), outputs, vars);
}

int command_topo(const po::variables_map& vars) {
  const fs::path out = output_directory_of(vars);
  const auto scenario = load_scenario(vars["scenario"].as<std::string>(), overrides_from(vars), ScenarioPart::Cluster);
  const auto report = run_topology_study(scenario);
  write_topology_report(report, out);
  std::cout << topology_summary(report);
  std::cout << fmt::format("  wrote        {}/topology.json\n", out.string());
  return 0;
}

// Compares `strategies` on `scenario` (on each of `networks`, the scenario
// resolved with each, when given) into --output: the table on stdout.
int run_comparison(const ResolvedScenario& scenario, const std::vector<std::string>& strategies,
                   const po::variables_map& vars, std::span<const ResolvedScenario> networks = {}) {
  const auto lock = lock_output(vars);
  const fs::path out = vars["output"].as<std::string>();
  const RunOutputs outputs = outputs_from(vars);
  const auto result = networks.empty() ? compare_strategies(scenario, strategies) : compare_on_networks(networks, strategies);
  const auto& comparison = result.comparison;
  if (comparison.records_size() == 0) {
    std::vector<std::string> reasons;  // one line: "a: why; b: why"
    for (const auto& f : comparison.failures()) reasons.push_back(fmt::format("{}: {}", f.strategy(), f.message()));
    throw InputError(fmt::format("{}: compare: no strategy could run it: {}", scenario.source, fmt::join(reasons, "; ")));
  }
  for (const auto& f : comparison.failures()) {
    logging::warn("cli", "compare: {}{} failed: {}", f.strategy(), networks.empty() ? "" : " on " + f.network(),
                  f.message());
  }
  write_comparison_directory(result, out, outputs);
  std::cout << comparison_summary(comparison);
  if (vars["html"].as<bool>()) {
    std::cout << fmt::format("  page         {}\n", write_html_report(out, paper_beside(scenario.source)).string());
  }
  logging::info("cli", "wrote {}/{{compare.json, compare.csv}} and a run directory per strategy", out.string());
  return 0;
}

int command_compare(const po::variables_map& vars) {
  const auto strategies = strategies_from(vars, planner_names());
  const std::string path = vars["scenario"].as<std::string>();
  const auto scenario = load_scenario(path, overrides_from(vars));
  if (!vars.count("networks")) return run_comparison(scenario, strategies, vars);
  std::vector<ResolvedScenario> per_network;
  for (const auto& name : parse_network_list(vars["networks"].as<std::string>(), scenario)) {
    auto overrides = overrides_from(vars);
    overrides.push_back("cluster.network=" + name);
    per_network.push_back(load_scenario(path, overrides));
  }
  return run_comparison(scenario, strategies, vars, per_network);
}

// The bare `eppsim`: what the project is about, in seconds. Elastic pipeline
// parallelism against the systems it is measured against, on the embedded
// showcase's long-context mix.
const std::vector<std::string> kShowcaseStrategies = {"packed-1f1b", "ulysses", "seq1f1b", "flexsp", "epp"};

int command_sweep(const po::variables_map& vars) {
  SweepCommand command;
  command.sweep = vars["sweep"].as<std::string>();
  command.options.output = vars["output"].as<std::string>();
  command.options.jobs = vars["jobs"].as<std::uint32_t>();
  command.options.outputs = vars["outputs"].as<std::string>();
  command.options.points = vars["points"].as<std::string>();
  command.options.html = vars["html"].as<bool>();
  if (vars.count("point")) command.point = vars["point"].as<std::uint32_t>();
  if (vars.count("log")) command.log = vars["log"].as<std::string>();
  run_sweep_command(command);
  return 0;
}

int command_showcase(const po::variables_map& vars) {
  std::cout << "eppsim: elastic pipeline parallelism (epp, InfiniPipe) against Megatron-LM, DeepSpeed-Ulysses, "
               "Seq1F1B and FlexSP on a long-context length mix\n"
               "(the embedded scenarios/showcase.textproto; `eppsim run SCENARIO` or `eppsim compare SCENARIO` "
               "for your own)\n";
  return run_comparison(load_embedded_showcase(overrides_from(vars)), strategies_from(vars, kShowcaseStrategies), vars);
}

int command_plan(const po::variables_map& vars) {
  const auto scenario = load_scenario(vars["scenario"].as<std::string>(), overrides_from(vars));
  const fs::path out = vars["output"].as<std::string>();
  proto_format_for(out);  // a bad extension fails before a long plan
  const auto planned = plan_scenario(scenario);
  write_schedule_file(planned.schedule, out);
  logging::info("cli", "planned {} ranks with {} in {:.3f} s; wrote {}", planned.schedule.num_ranks(),
                planned.schedule.strategy(), planned.plan_time_s, out.string());
  return 0;
}

int command_sim(const po::variables_map& vars) {
  const auto lock = lock_output(vars);
  const RunOutputs outputs = outputs_from(vars);
  auto loaded = load_schedule_on_cluster(vars["schedule"].as<std::string>(),
                                         parse_scenario_file(vars["cluster"].as<std::string>(), overrides_from(vars)),
                                         comm_groups_from(vars));
  return finish_run(
      simulate_schedule(std::move(loaded.schedule), loaded.cluster, 0.0, vars["schedule"].as<std::string>(),
                        outputs.trace_detail()),
      outputs,
      vars);
}

int command_replay(const po::variables_map& vars) {
  const auto lock = lock_output(vars);
  const RunOutputs outputs = outputs_from(vars);
  ReplayRequest request;
  request.input = vars["input"].as<std::string>();
  if (vars.count("schedule")) request.schedule = vars["schedule"].as<std::string>();
  if (vars.count("recorded-cluster")) request.recorded_cluster = vars["recorded-cluster"].as<std::string>();
  request.comm_groups = comm_groups_from(vars);
  request.compute = parse_replay_compute(vars["compute"].as<std::string>());
  return finish_run(replay(request, parse_scenario_file(vars["cluster"].as<std::string>(), overrides_from(vars))), outputs,
                    vars);
}

// `eppsim export chakra SCHEDULE -o PREFIX`: PREFIX.<rank>.et and PREFIX.comm_groups.json.
int export_chakra_command(const po::variables_map& vars) {
  const proto::Schedule schedule = expand_identical_replicas(read_schedule_file(vars["trace"].as<std::string>()));
  const fs::path prefix = vars["output"].as<std::string>();
  write_chakra_trace(export_chakra(schedule), prefix);
  logging::info("cli", "wrote {} rank files {}.<rank>.et and {}.comm_groups.json", schedule.num_ranks(), prefix.string(),
                prefix.string());
  return 0;
}

int command_export(const po::variables_map& vars) {
  const auto format = vars["format"].as<std::string>();
  const fs::path in = vars["trace"].as<std::string>(), out = vars["output"].as<std::string>();
  if (format == "chakra") return export_chakra_command(vars);
  // Each reads the trace a part at a time (TraceFile).
  if (format == "chrome") {
    write_chrome_trace(TraceFile(in, 0.0), out);
  } else if (format == "perfetto") {
    write_perfetto_trace(TraceFile(in, kPerfettoExportBytesPerTraceByte), out);
  } else if (format == "timeline") {
    write_rank_timeline_csv(TraceFile(in, kRankTimelineBytesPerTraceByte), out);
  } else {
    throw InputError(fmt::format("export: unknown format '{}' (known: chrome, perfetto, timeline, chakra)", format));
  }
  logging::info("cli", "wrote {}", out.string());
  return 0;
}

int command_diff(const po::variables_map& vars) {
  const fs::path out = output_directory_of(vars);
  const int top = vars["top"].as<int>();
  if (top < 0) throw InputError(fmt::format("diff: --top: must be >= 0, got {}", top));
  if (static_cast<std::uint32_t>(top) > limits::kMaxTop)
    throw InputError(fmt::format("diff: --top: must be <= {} (the bound of base/input_limits.h), got {}", limits::kMaxTop, top));
  const auto diff =
      diff_trace_files(vars["base"].as<std::string>(), vars["new"].as<std::string>(), static_cast<std::size_t>(top));
  fs::create_directories(out);
  write_file_atomically(out / "diff.json", to_json(diff));
  std::cout << diff_summary(diff);
  std::cout << fmt::format("  wrote        {}/diff.json\n", out.string());
  return 0;
}

int command_calibrate(const po::variables_map& vars) {
  const fs::path out = vars["output"].as<std::string>();
  const auto format = proto_format_for(out);  // a bad extension fails before any work
  std::vector<fs::path> benches;
  for (const auto& b : vars["bench"].as<std::vector<std::string>>()) benches.emplace_back(b);
  const auto calibration = calibrate_files(benches);
  std::vector<proto::BenchFile> held_out;
  if (vars.count("held-out")) {
    for (const auto& b : vars["held-out"].as<std::vector<std::string>>()) held_out.push_back(read_bench_file(b));
  }
  write_message(calibration, out, format);
  std::cout << calibration_summary(calibration);
  if (!held_out.empty()) std::cout << held_out_summary(check_held_out(calibration, held_out));
  std::cout << fmt::format("  wrote        {}\n", out.string());
  return 0;
}

int command_validate(const po::variables_map& vars) {
  const fs::path out = output_directory_of(vars);
  const proto::Validation validation =
      validate_trace_files(vars["simulated"].as<std::string>(), vars["measured"].as<std::string>(), out);
  std::cout << validation_summary(validation);
  std::cout << fmt::format("  wrote        {}/{{validation.json, timeline.csv}}\n", out.string());
  return 0;
}

// The testbed summary's line on how far the machine moved (sim/bench_drift.h).
std::string drift_line(const ComputeDrift& drift) {
  return fmt::format("  machine      compute {:+.1f}% after the run against its benchmark "
                     "({} rows, {:+.1f}% to {:+.1f}%)\n",
                     100.0 * drift.drift(), drift.rows, 100.0 * (drift.least_row_ratio - 1.0),
                     100.0 * (drift.most_row_ratio - 1.0));
}

int command_testbed(const po::variables_map& vars) {
  const auto lock = lock_output(vars);
  TestbedRequest request;
  request.scenario = vars["scenario"].as<std::string>();
  request.output_dir = vars["output"].as<std::string>();
  request.backend = vars["backend"].as<std::string>();
  if (vars.count("runtime-dir")) request.runtime_dir = vars["runtime-dir"].as<std::string>();
  if (vars.count("bench")) request.reuse_bench = vars["bench"].as<std::string>();
  request.overrides = overrides_from(vars);
  if (vars.count("launcher")) request.launcher = vars["launcher"].as<std::string>();
  request.measured_steps = vars["steps"].as<std::uint32_t>();
  if (request.measured_steps < 1 || request.measured_steps > limits::kMaxMeasuredSteps) {
    throw InputError(fmt::format("testbed: --steps: must be in [1, {}], got {}", limits::kMaxMeasuredSteps,
                                 request.measured_steps));
  }
  if (vars.count("real-ranks")) request.real_ranks = vars["real-ranks"].as<std::string>();
  request.closed_loop = vars["closed-loop"].as<bool>();
  const auto result = run_testbed(request);
  if (!result.real_ranks.empty()) {
    std::cout << fmt::format("eppsim testbed: {}\n  measured     {:.4f} s per step, hybrid: ranks {} real, the other {} "
                             "virtual ({} loop)\n  calibrated   {:.4f} s per step simulated, error {:+.1f}%\n{}"
                             "  wrote        {}/{{calibration.textproto, simulated/, measured/, validation.json, "
                             "timeline.csv}}\n",
                             request.scenario.string(), result.measured_step_s, format_index_list(result.real_ranks),
                             result.ranks - result.real_ranks.size(), request.closed_loop ? "closed" : "open",
                             result.simulated_step_s, 100.0 * result.step_time_error, drift_line(result.compute_drift),
                             request.output_dir.string());
    return 0;
  }
  std::cout << fmt::format("eppsim testbed: {}\n  measured     {:.4f} s per step\n"
                           "  calibrated   {:.4f} s per step simulated, error {:+.1f}%\n"
                           "  uncalibrated {:.4f} s per step simulated, error {:+.1f}%\n{}"
                           "  wrote        {}/{{calibration.textproto, simulated/, measured/, uncalibrated/, "
                           "validation.json, timeline.csv}}\n",
                           request.scenario.string(), result.measured_step_s, result.simulated_step_s,
                           100.0 * result.step_time_error, result.uncalibrated_step_s,
                           100.0 * result.uncalibrated_step_time_error, drift_line(result.compute_drift),
                           request.output_dir.string());
  return 0;
}

int command_presets(const po::variables_map&) {
  std::cout << presets_listing();
  return 0;
}

int command_version(const po::variables_map&) {
  std::cout << "eppsim " << eppsim_version() << '\n';
  return 0;
}

}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"", "[-o DIR] [--html] [--strategies a,b,...] [--outputs LIST] [--set FIELD=VALUE]...",
       "compare epp (InfiniPipe) with its baselines on the embedded long-context showcase into ./eppsim-out/", {},
       [](po::options_description& o) {
         add_strategies_option(o, fmt::format("{}", fmt::join(kShowcaseStrategies, ",")));
         add_output_option(o);
         add_outputs_option(o);
         add_engine_option(o);
         add_html_option(o);
         add_set_option(o, "workload.global_batch=64");
       },
       command_showcase},
      {"run", "run SCENARIO [-o DIR] [--html] [--outputs LIST] [--trace-ranks LIST] [--strategy NAME] [--set FIELD=VALUE]...",
       "plan and simulate a scenario; write report, timings, scenario, trace and CSV files", {"scenario"},
       [](po::options_description& o) {
         add_scenario_option(o);
         add_output_option(o);
         add_outputs_option(o);
         add_trace_ranks_option(o);
         add_html_option(o);
         add_scenario_options(o);
       },
       command_run},
      {"compare", "compare SCENARIO [--strategies a,b,...] [--networks all|a,b,...] [-o DIR] [--html]",
       "every strategy (default all) on the same sampled batch and cluster: a table, DIR/compare.json, "
       "DIR/compare.csv and DIR/STRATEGY/ run directories",
       {"scenario"},
       [](po::options_description& o) {
         add_scenario_option(o);
         add_strategies_option(o, fmt::format("all: {}", fmt::join(planner_names(), ",")));
         o.add_options()("networks", po::value<std::string>(),
                         "run every strategy on each network: all (the scenario's, then cluster.compare_topologies) or "
                         "a comma-separated list of their names (and simple); rows are STRATEGY@NETWORK");
         add_output_option(o);
         add_outputs_option(o);
         add_html_option(o);
         add_engine_option(o);
         add_set_option(o, "workload.global_batch=64");
       },
       command_compare},
      {"sweep", "sweep SWEEP [-o DIR] [-j N] [--outputs LIST] [--points LIST] [--html]",
       "every point of a study's grid (sweep file: proto/sweep.proto), each in its own process, resumable, spread "
       "over the ranks under mpirun: DIR/results.csv, DIR/results.json, DIR/points/",
       {"sweep"},
       [](po::options_description& o) {
         o.add_options()("sweep", po::value<std::string>()->required(), "sweep file (.textproto)");
         add_output_option(o);
         o.add_options()("jobs,j", po::value<std::uint32_t>()->default_value(0),
                         "points at once (0: the cores, shared among the sweep's processes on this machine)")(
             "outputs", po::value<std::string>()->default_value("none"),
             "each point's run directory DIR/runs/KEY/: none, all, or a list of trace, chrome, csv, schedule")(
             "points", po::value<std::string>()->default_value(""),
             "run and report only these points: indices and ranges, 0,3,7-9")(
             "point", po::value<std::uint32_t>(), "run this point only (what each worker process does)");
         o.add_options()("html", po::bool_switch(), "also write DIR/report.html, the sweep's page (plots/report.py)");
       },
       command_sweep},
      {"topo", "topo SCENARIO [-o DIR]",
       "build the cluster's topology (and cluster.compare_topologies); report metrics and cost in DIR/topology.json",
       {"scenario"},
       [](po::options_description& o) {
         add_scenario_option(o);
         add_output_option(o);
         add_set_option(o, "cluster.prices.optical_switch_port_usd=300");
       },
       command_topo},
      {"plan", "plan SCENARIO -o SCHEDULE", "write the planned Schedule (.pb, .json or .textproto)", {"scenario"},
       [](po::options_description& o) {
         add_scenario_option(o);
         o.add_options()("output,o", po::value<std::string>()->required(), "schedule file: .pb, .json or .textproto");
         add_scenario_options(o);
       },
       command_plan},
      {"sim", "sim SCHEDULE --cluster SCENARIO [-o DIR]",
       "simulate a Schedule (or a Chakra trace: PREFIX with PREFIX.0.et beside it) on a scenario's cluster",
       {"schedule"},
       [](po::options_description& o) {
         o.add_options()("schedule", po::value<std::string>()->required(),
                         "schedule file (.pb, .json or .textproto), or a Chakra trace prefix (PREFIX.<rank>.et)")(
             "cluster", po::value<std::string>()->required(), "scenario whose cluster and cost model are used (the model is the schedule's)");
         add_comm_groups_option(o);
         add_output_option(o);
         add_outputs_option(o);
         add_trace_ranks_option(o);
         add_engine_option(o);
         add_set_option(o, "cluster.inter_node.bandwidth=200Gbps");
       },
       command_sim},
      {"export", "export chrome|perfetto|timeline TRACE -o FILE | export chakra SCHEDULE -o PREFIX",
       "a trace (trace.pb, .json or .textproto, or a run directory) as a Chrome trace (FILE.json) or Perfetto's own "
       "format (FILE.pftrace, for large traces), both for ui.perfetto.dev, or as each rank's states over the step (timeline: "
       "rank,start_s,end_s,state CSV); or a Schedule as a Chakra trace for ASTRA-sim (PREFIX.<rank>.et, PREFIX.comm_groups.json)",
       {"format", "trace"},
       [](po::options_description& o) {
         o.add_options()("format", po::value<std::string>()->required(), "export format: chrome, perfetto, timeline or chakra")(
             "trace", po::value<std::string>()->required(),
             "trace file (.pb, .json or .textproto) or run directory; for chakra a Schedule file")(
             "output,o", po::value<std::string>()->required(), "output file; for chakra the trace prefix");
       },
       command_export},
      {"diff", "diff BASE NEW [-o DIR] [--top N]",
       "what changed between two traces (files or run directories): step time, per op kind, per rank, the top "
       "regressions; DIR/diff.json",
       {"base", "new"},
       [](po::options_description& o) {
         o.add_options()("base", po::value<std::string>()->required(), "the trace compared against")(
             "new", po::value<std::string>()->required(), "the trace whose changes are reported")(
             "top", po::value<int>()->default_value(10), "entries in each top-regressions list");
         add_output_option(o);
       },
       command_diff},
      {"replay", "replay TRACE_OR_CHAKRA_PREFIX --cluster SCENARIO [-o DIR] [--compute recorded|cost-model]",
       "re-time a recorded step on another cluster: compute keeps its recorded durations scaled by the GPU's peak "
       "FLOP/s (or is re-priced by the cost model), communication is re-simulated on the new network",
       {"input"},
       [](po::options_description& o) {
         o.add_options()("input", po::value<std::string>()->required(),
                         "trace.pb (of eppsim run/sim or eppsim-run), or a Chakra trace prefix")(
             "cluster", po::value<std::string>()->required(), "scenario of the cluster to replay on")(
             "compute", po::value<std::string>()->default_value("recorded"),
             "recorded (recorded durations x recorded/new peak FLOP/s) or cost-model")(
             "schedule", po::value<std::string>(), "the Schedule the trace ran (default: schedule.pb beside the trace)")(
             "recorded-cluster", po::value<std::string>(),
             "scenario of the cluster the trace was recorded on (default: scenario.textproto beside the trace; a "
             "Chakra trace without one keeps its durations)");
         add_comm_groups_option(o);
         add_output_option(o);
         add_outputs_option(o);
         add_trace_ranks_option(o);
         add_engine_option(o);
         add_set_option(o, "cluster.inter_node.bandwidth=400Gbps");
       },
       command_replay},
      {"validate", "validate --simulated TRACE --measured TRACE [-o DIR]",
       "compare a simulated trace with a measured one of the same schedule: DIR/validation.json (step-time and "
       "per-op-kind errors, per-rank busy and idle time) and DIR/timeline.csv (both timelines, op by op)",
       {},
       [](po::options_description& o) {
         o.add_options()("simulated", po::value<std::string>()->required(),
                         "simulated trace (trace.pb of `eppsim run`; .pb, .json or .textproto)")(
             "measured", po::value<std::string>()->required(),
             "measured trace (of `eppsim-run`) of the same schedule");
         add_output_option(o);
       },
       command_validate},
      {"calibrate", "calibrate BENCH.json... -o CALIBRATION [--held-out BENCH.json...]",
       "fit the cost model's compute and communication coefficients to `eppsim-bench` results by least squares, "
       "with fit quality; a scenario names the file in cost_model.calibration_file",
       {"bench"},
       [](po::options_description& o) {
         o.add_options()("bench", po::value<std::vector<std::string>>()->required()->multitoken(),
                         "BENCH.json files of `eppsim-bench compute`, `comm` or `interference` (one or more)")(
             "output,o", po::value<std::string>()->required(), "calibration file: .pb, .json or .textproto")(
             "held-out", po::value<std::vector<std::string>>()->multitoken(),
             "BENCH.json files the fits are scored on, not fitted to (another run, other sizes): each fit's "
             "max and rms error on their rows; interference by its one factor and by size");
       },
       command_calibrate, true},
      {"testbed",
       "testbed SCENARIO [-o DIR] [--backend cpu|cuda] [--bench DIR] [--launcher CMD] [--real-ranks LIST "
       "[--closed-loop]] [--set F=V]",
       "on this machine or cluster: benchmark, calibrate, plan, simulate, execute with mpirun eppsim-run, validate "
       "(DIR/validation.json), and the same against the uncalibrated model (DIR/uncalibrated/)",
       {"scenario"},
       [](po::options_description& o) {
         add_scenario_option(o);
         add_output_option(o);
         o.add_options()("backend", po::value<std::string>()->default_value("cpu"), "runtime backend: cpu or cuda")(
             "steps", po::value<std::uint32_t>()->default_value(3), "measured steps (eppsim-run keeps the median)")(
             "runtime-dir", po::value<std::string>(),
             "folder of eppsim-run and eppsim-bench (default: beside eppsim, its build tree, or PATH)")(
             "bench", po::value<std::string>(),
             "use the benchmarks of an earlier testbed run on this machine (its output folder or its bench/) "
             "instead of benchmarking again: same backend, the scenario's model, enough ranks")(
             "launcher", po::value<std::string>(),
             "how to start N processes, {ranks} where N goes, e.g. \"srun --ntasks={ranks}\" or \"mpirun -np {ranks} "
             "--hostfile HOSTS\" (default: mpirun on this machine, one rank per core)")(
             "real-ranks", po::value<std::string>(),
             "hybrid emulation: run only these ranks (0,3,7-9) for real, the others timed by the calibrated "
             "simulation (eppsim-run --ranks); no uncalibrated comparison")(
             "closed-loop", po::bool_switch(),
             "with --real-ranks: re-time the virtual ranks from the real ranks' progress (eppsim-run --closed-loop)");
         add_set_option(o, "workload.global_batch=32");
       },
       command_testbed},
      {"presets", "presets", "list the built-in GPU and model presets, and the strategies", {},
       [](po::options_description&) {}, command_presets},
      {"version", "version", "print eppsim's version", {}, [](po::options_description&) {}, command_version},
  };
  return table;
}

std::vector<std::string_view> command_names() {
  std::vector<std::string_view> names;
  for (const auto& c : commands()) {
    if (!c.name.empty()) names.push_back(c.name);
  }
  return names;
}

}  // namespace eppsim
