#include "sim/output_directory.h"
#include "sim/run.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"
#include "base/interrupt.h"
#include "base/log.h"
#include "base/memory_limit.h"
#include "sim/cluster_cost.h"
#include "sim/engine/analytic_engine.h"
#include "sim/engine/engine_registry.h"
#include "sim/engine/fault_plan.h"
#include "sim/fault_report.h"
#include "sim/plan/collective_benchmark.h"
#include "sim/plan/planner.h"
#include "traces/chrome_trace.h"
#include "traces/perfetto_trace.h"
#include "schedule/trace_events.h"
#include "scenario/cost_model_factory.h"
#include "traces/csv_export.h"
#include "schedule/identical_replicas.h"
#include "schedule/model_shape.h"
#include "base/proto_io.h"
#include "schedule/schedule_file.h"
#include "schedule/trace_file.h"
#include "traces/trace_report.h"

namespace eppsim {
namespace {

// The scenario's engine from the registry; an unknown name is located at
// simulation.engine (file, line, or the --set that named it).
const EngineInfo& engine_of(const ResolvedScenario& scenario) {
  for (const EngineInfo& engine : engines()) {
    if (engine.name == scenario.simulation.engine) return engine;
  }
  scenario.where().fail("simulation.engine", fmt::format("unknown engine \"{}\" (available: {})", scenario.simulation.engine,
                                                         fmt::join(engine_names(), ", ")));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The schedule's placement: its own, or the scenario's default (rank r on the
// r-th usable GPU).
std::vector<RankPlacement> placement_of(const proto::Schedule& schedule, const ResolvedScenario& scenario) {
  if (schedule.placement_size() == 0) return default_placement(scenario, schedule.num_ranks());
  std::vector<RankPlacement> placement(schedule.num_ranks());
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    const auto& p = schedule.placement(static_cast<int>(r));
    placement[r] = RankPlacement{p.node(), p.local_gpu()};
  }
  return placement;
}

// The cost model for `placement`: the scenario's own when it is the default
// one, else one built for it (scenario/cost_model_factory.h checks the placement).
std::shared_ptr<const CostModel> cost_for(std::span<const RankPlacement> placement, const ResolvedScenario& scenario) {
  bool is_default = true;
  for (std::uint32_t r = 0; r < placement.size() && is_default; ++r) {
    is_default = placement[r].node == scenario.node_of_rank(r) && placement[r].local_gpu == scenario.cluster.local_gpu_of(r);
  }
  return is_default ? scenario.cost.model : make_cost_model(scenario, placement);
}

EnginePlacement engine_placement(std::span<const RankPlacement> placement, const ResolvedScenario& scenario) {
  EnginePlacement out;
  for (const RankPlacement& p : placement) {
    out.node_of_rank.push_back(p.node);
    out.chip_of_rank.push_back(p.node * scenario.cluster.gpus_per_node + p.local_gpu);
  }
  out.topology = [config = network_of(scenario), built = std::shared_ptr<const Topology>()]() mutable {
    if (!built) built = build_topology(config);
    return built;
  };
  return out;
}

// The Schedule the engine runs for `schedule`: itself; or, for a Schedule of
// identical replicas, one replica of each class of equal op times
// (schedule/identical_replicas.h), or every rank written out when faults, the
// flow engine (whose links replicas share) or the scenario turn that off.
proto::Schedule schedule_to_simulate(const proto::Schedule& schedule, const ResolvedScenario& scenario,
                                     const CostModel& cost, const EngineInfo& engine, bool faults) {
  const auto layout = replica_layout(schedule);
  std::string why_not;
  if (!scenario.simulation.identical_replicas) why_not = "simulation.identical_replicas is false";
  else if (faults) why_not = "the step has simulated faults";
  else if (engine.name != "analytic") why_not = fmt::format("the {} engine's links are shared between replicas", engine.name);
  if (!why_not.empty()) {
    logging::info("sim", "identical replicas: simulating every one of the {} replicas' ranks, since {}", layout->copies,
                  why_not);
    return expand_identical_replicas(schedule);
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::uint32_t> classes = replica_classes(schedule, cost);
  logging::debug("sim", "identical replicas: classes found in {:.3f} s", seconds_since(start));
  std::uint32_t simulated = 0;
  for (std::uint32_t d = 0; d < layout->copies; ++d) simulated += classes[d] == d;
  logging::info("sim", "identical replicas: {} replicas in {} class{} of equal op times; simulating {} of {} ranks",
                layout->copies, simulated, simulated == 1 ? "" : "es",
                static_cast<std::uint64_t>(schedule.num_ranks()) / layout->copies * simulated, schedule.num_ranks());
  return with_representatives(schedule, classes);
}

// Runs `schedule` on the scenario's engine. With `faults`, the scenario's
// simulated faults are injected and `*faults` receives them as the engine saw
// them; without, the run is healthy. With `coverage`, it receives what the
// report says of the ranks whose events the trace keeps; with
// `estimated_peak_bytes`, the memory guard's estimate of the run's peak.
proto::Trace run_engine(const proto::Schedule& planned, const ResolvedScenario& scenario, FaultPlan* faults,
                        const TraceDetail& detail, proto::TraceCoverage* coverage = nullptr,
                        std::uint64_t* estimated_peak_bytes = nullptr) {
  if (planned.num_ranks() > scenario.usable_gpus()) {
    throw InputError(fmt::format("schedule has {} ranks but {} has only {} usable GPUs", planned.num_ranks(),
                                 scenario.source, scenario.usable_gpus()));
  }
  const EngineInfo& engine = engine_of(scenario);
  const auto placement = placement_of(planned, scenario);
  const auto cost = cost_for(placement, scenario);
  std::optional<proto::Schedule> prepared;
  if (planned.has_identical_replicas()) {
    const bool with_faults = faults != nullptr && !scenario.simulation.faults.empty();
    prepared = schedule_to_simulate(planned, scenario, *cost, engine, with_faults);
  }
  const proto::Schedule& schedule = prepared ? *prepared : planned;
  const EnginePlacement where = engine_placement(placement, scenario);
  if (faults != nullptr) *faults = make_fault_plan(scenario.simulation.faults, schedule.num_ranks(), where, scenario.where());
  TraceSelection selection = {.op_events = false, .ranks = {}, .slowest_rank = false};
  proto::TraceCoverage unused;
  if (detail.op_events) selection = select_trace_ranks(detail.ranks, schedule, faults, coverage ? coverage : &unused);
  EngineContext context{*cost, &where, faults, scenario.cost.interference, scenario.simulation.shared_endpoints,
                        std::move(selection)};
  // The memory guard: what the process holds now, and what the simulation adds.
  const std::uint64_t held = held_memory_bytes();
  const std::uint64_t platform = engine.platform_bytes ? engine.platform_bytes(schedule, context) : 0;
  const std::uint64_t estimate =
      held + simulation_memory_bytes(schedule, context.trace, engine.state_bytes_per_op) + platform;
  if (estimated_peak_bytes != nullptr) *estimated_peak_bytes = estimate;
  std::string what =
      fmt::format("simulating {} ranks' {} with the {} engine", schedule.num_ranks(), schedule.strategy(), engine.name);
  if (platform > 0) what += fmt::format(" (its platform about {:.1f} GiB)", static_cast<double>(platform) / (1 << 30));
  check_memory_estimate(what, estimate,
                        platform > 0 ? "simulate fewer ranks, use --engine analytic, or raise --max-memory"
                        : context.trace.op_events
                            ? "keep fewer ranks' op events (--trace-ranks auto, or --outputs none), simulate fewer "
                              "ranks, or raise --max-memory"
                            : "simulate fewer ranks or a smaller step, or raise --max-memory");
  proto::Trace trace = engine.run(schedule, context);
  logging::debug("sim", "memory guard: held {:.2f} GiB before the engine, estimated peak {:.2f} GiB, peak RSS {:.2f} GiB",
                 static_cast<double>(held) / (1 << 30), static_cast<double>(estimate) / (1 << 30),
                 peak_rss_bytes() / (1 << 30));
  return trace;
}

// lengths.csv: one row per sampled sequence, in sampling order.
void write_lengths_csv(std::span<const std::uint64_t> lengths, const std::filesystem::path& path) {
  std::string out = "sequence,length_tokens\n";
  for (std::size_t i = 0; i < lengths.size(); ++i) out += fmt::format("{},{}\n", i, lengths[i]);
  write_file_atomically(path, out);
}

// `text`'s lines, each after the first prefixed by `indent`.
std::string indent_lines(std::string_view text, std::string_view indent) {
  std::string out;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size() - 1) + 1;
    if (start > 0) out += indent;
    out += text.substr(start, end - start);
    start = end;
  }
  return out;
}

// "  trace        op events of 3 of 64 ranks (REASON): 0, 8, 63\n", or nothing
// when the trace kept every rank's.
std::string trace_ranks_line(const proto::Report& report) {
  if (!report.has_trace_ranks()) return {};
  const auto& kept = report.trace_ranks();
  constexpr int kNamed = 12;
  std::vector<std::uint32_t> named(kept.ranks().begin(), kept.ranks().begin() + std::min(kNamed, kept.ranks_size()));
  return fmt::format("  trace        op events of {} of {} ranks ({}): {}{}\n", kept.ranks_size(), report.ranks(),
                     kept.reason(), fmt::join(named, ", "), kept.ranks_size() > kNamed ? ", ..." : "");
}

}  // namespace

double simulated_step_seconds(const proto::Schedule& schedule, const ResolvedScenario& scenario) {
  return static_cast<double>(run_engine(schedule, scenario, nullptr, TraceDetail::summary()).step_time_ns()) * 1e-9;
}

PlannedBatch plan_scenario(const ResolvedScenario& scenario) {
  engine_of(scenario);  // a bad engine name fails before a long plan
  const auto start = std::chrono::steady_clock::now();
  PlannedBatch planned;
  if (scenario.workload.collective) {
    planned.schedule = plan_collective_benchmark(scenario);
  } else {
    const auto planner = make_planner(scenario.plan.strategy, scenario);
    planned.lengths = sample_batch(scenario);
    planned.schedule = planner->plan(PlanContext(scenario, simulated_step_seconds), planned.lengths);
  }
  planned.plan_time_s = seconds_since(start);
  return planned;
}

RunResult simulate_schedule(proto::Schedule schedule, const ResolvedScenario& cluster, double plan_time_s,
                            std::string_view schedule_source, const TraceDetail& detail) {
  const auto start = std::chrono::steady_clock::now();
  RunResult result;
  logging::info("sim", "simulating {} ({} ranks) with the {} engine", schedule.strategy(), schedule.num_ranks(),
                engine_of(cluster).name);
  FaultPlan faults;
  proto::TraceCoverage coverage;
  try {
    result.trace = cluster.simulation.faults.empty()
                       ? run_engine(schedule, cluster, nullptr, detail, &coverage, &result.estimated_peak_bytes)
                       : run_engine(schedule, cluster, &faults, TraceDetail{true, detail.ranks}, &coverage,
                                    &result.estimated_peak_bytes);
  } catch (const Interrupted&) {
    abandon(schedule);  // the process ends next: no seconds spent freeing it
    throw;
  } catch (const InputError& e) {
    // Name the input the engine refused, unless the error already does (a
    // scenario's faults name their own file and field).
    const std::string_view source = schedule_source.empty() ? std::string_view(cluster.source) : schedule_source;
    if (std::string_view(e.what()).starts_with(fmt::format("{}:", source))) throw;
    throw InputError(fmt::format("{}: {}", source, e.what()));
  }
  if (const auto& cost = cluster.proto.cost_model(); !cost.calibration_file().empty()) {
    result.trace.set_calibration(cost.calibration_file());
  } else if (cost.has_calibration()) {
    result.trace.set_calibration("inline");
  }
  RunContext context;
  context.scenario = cluster.proto.name();
  context.peak_flops_per_gpu = cluster.cluster.gpu.peak_bf16.value;
  context.seed = cluster.workload.seed;
  context.network = cluster.cluster.network_name();
  result.report = build_report(result.trace, schedule, context);
  if (result.trace.traced_ranks_size() > 0) {
    *coverage.mutable_ranks() = result.trace.traced_ranks();
    *result.report.mutable_trace_ranks() = coverage;
  }
  if (!faults.empty()) {
    // The same schedule without the faults, for the slowdown they caused.
    *result.report.mutable_faults() =
        fault_report(faults, result.trace, run_engine(schedule, cluster, nullptr, TraceDetail::summary()));
    if (result.trace.has_incomplete()) clear_step_figures(result.report);
  }
  if (cluster.workload.collective && schedule.strategy() == kCollectiveStrategy && !result.trace.has_incomplete()) {
    *result.report.mutable_collective() = collective_report(*cluster.workload.collective, result.report.step_time_s());
  }
  if (!result.report.has_collective()) {
    if (auto cost = cluster_cost(cluster, result.report.tokens_per_s())) *result.report.mutable_cost() = *cost;
  }
  result.plan_time_s = plan_time_s;
  result.simulation_time_s = seconds_since(start);
  result.schedule = std::move(schedule);
  result.scenario = cluster.proto;
  return result;
}

ResolvedScenario cluster_for_schedule(ParsedScenario parsed, const proto::Schedule& schedule,
                                      std::string_view schedule_source) {
  if (schedule.header().has_model()) {
    *parsed.proto.mutable_model() = to_scenario_model(from_model_shape(schedule.header().model(), schedule_source));
  }
  return resolve_simulation_part(parsed);
}

RunResult run_scenario(const ResolvedScenario& scenario, const TraceDetail& detail) {
  auto planned = plan_scenario(scenario);
  auto result = simulate_schedule(std::move(planned.schedule), scenario, planned.plan_time_s, {}, detail);
  result.lengths = std::move(planned.lengths);
  return result;
}

RunOutputs parse_run_outputs(std::string_view list) {
  if (list == "all") return RunOutputs{};
  RunOutputs outputs{false, false, false, false};
  if (list == "none") return outputs;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t end = std::min(list.find(',', begin), list.size());
    const std::string_view name = list.substr(begin, end - begin);
    if (name == "trace") outputs.trace = true;
    else if (name == "chrome") outputs.chrome = true;
    else if (name == "csv") outputs.csv = true;
    else if (name == "schedule") outputs.schedule = true;
    else {
      throw InputError(fmt::format("--outputs: unknown output '{}' in '{}' (known: all, none, or a list of trace, "
                                   "chrome, csv, schedule)",
                                   name, list));
    }
    begin = end + 1;
  }
  return outputs;
}

std::string viewer_trace_file(const proto::Trace& trace) {
  return events_of(trace).size() > kMaxChromeTraceEvents ? "trace.pftrace" : "trace.json";
}

std::vector<std::string> run_output_files(const RunOutputs& outputs, const proto::Trace& trace) {
  std::vector<std::string> files = {"report.json", "timings.json", "scenario.textproto"};
  if (outputs.trace) files.push_back("trace.pb");
  if (outputs.chrome) files.push_back(viewer_trace_file(trace));
  if (outputs.csv) files.insert(files.end(), {"ops.csv", "memory.csv"});
  files.insert(files.end(), {"ranks.csv", "lengths.csv"});
  if (outputs.schedule) files.push_back("schedule.pb");
  return files;
}

void write_run_directory(const RunResult& result, const std::filesystem::path& dir, const RunOutputs& outputs) {
  const auto start = std::chrono::steady_clock::now();
  OutputDirectory out(dir);
  const auto& d = out.staging();
  write_message(result.report, d / "report.json");
  write_message(result.scenario, d / "scenario.textproto");
  if (outputs.trace) write_trace_file(result.trace, d / "trace.pb");
  if (outputs.schedule) write_schedule_file(result.schedule, d / "schedule.pb");
  if (outputs.chrome) {
    const std::string viewer = viewer_trace_file(result.trace);
    if (viewer == "trace.json") {
      write_chrome_trace(result.trace, d / viewer);
    } else {
      logging::info("sim", "{} op events, past the {} a Chrome JSON trace opens with: writing {} (Perfetto's format) "
                    "instead of trace.json",
                    events_of(result.trace).size(), kMaxChromeTraceEvents, viewer);
      write_perfetto_trace(result.trace, d / viewer);
    }
  }
  if (outputs.csv) {
    write_ops_csv(result.trace, d / "ops.csv");
    write_memory_csv(result.trace, d / "memory.csv");
  }
  write_ranks_csv(result.report, d / "ranks.csv");
  write_lengths_csv(result.lengths, d / "lengths.csv");
  proto::Timings timings;
  timings.set_plan_time_s(result.plan_time_s);
  timings.set_simulation_time_s(result.simulation_time_s);
  timings.set_write_time_s(seconds_since(start));
  timings.set_peak_rss_bytes(peak_rss_bytes());
  timings.set_peak_rss_forked_bytes(peak_rss_of_children_bytes());
  timings.set_estimated_peak_bytes(static_cast<double>(result.estimated_peak_bytes));
  write_message(timings, d / "timings.json");
  out.commit();
}

std::string human_summary(const RunResult& result) {
  const proto::Report& r = result.report;
  const double step = r.step_time_s();
  auto share = [&](double part) { return step > 0 ? 100.0 * part / step : 0.0; };
  const auto& b = r.breakdown_s();
  double peak = 0;
  std::uint32_t peak_rank = 0;
  for (int i = 0; i < r.peak_memory_bytes_size(); ++i) {
    if (r.peak_memory_bytes(i) > peak) {
      peak = r.peak_memory_bytes(i);
      peak_rank = static_cast<std::uint32_t>(i);
    }
  }
  std::string out;
  out += fmt::format("eppsim {}: {} ({}, {} engine, {} network)\n", r.eppsim_version(), r.scenario(), r.strategy(),
                     r.engine(), r.network());
  if (r.has_collective()) {
    // A collective micro-benchmark: nccl-tests' figures instead of a training step's.
    const auto& c = r.collective();
    out += fmt::format("  collective   {} of {} per rank over {} ranks, {} algorithm, {} chunk{} x {} iteration{}\n",
                       c.kind(), format_bytes(Bytes(static_cast<std::uint64_t>(c.size_bytes()))), c.ranks(),
                       c.algorithm(), c.chunks(), c.chunks() == 1 ? "" : "s", c.iterations(),
                       c.iterations() == 1 ? "" : "s");
    out += fmt::format("  time         {} per iteration (step {})\n", format_seconds(Seconds(c.time_s())),
                       format_seconds(Seconds(step)));
    out += fmt::format("  bandwidth    algbw {}, busbw {}\n", format_bandwidth(BytesPerSecond(c.algbw_bps())),
                       format_bandwidth(BytesPerSecond(c.busbw_bps())));
    if (r.has_faults()) out += "  faults       " + fault_summary(r.faults(), "               ");
    out += fmt::format("  took         planning {:.3f} s, simulation {:.3f} s\n", result.plan_time_s, result.simulation_time_s);
    return out;
  }
  out += "  plan         " + indent_lines(r.plan_summary(), "               ");
  if (r.has_faults()) out += "  faults       " + fault_summary(r.faults(), "               ");
  if (r.has_faults() && !r.faults().step_completed()) {
    // No step time, throughput or MFU for a step that did not complete.
    out += fmt::format("  step         incomplete: {} sequences, {:.0f} tokens planned\n", r.sequences(), r.tokens());
    out += trace_ranks_line(r);
    out += fmt::format("  took         planning {:.3f} s, simulation {:.3f} s\n", result.plan_time_s, result.simulation_time_s);
    return out;
  }
  out += fmt::format("  step time    {:.4f} s for {} sequences, {:.0f} tokens\n", step, r.sequences(), r.tokens());
  out += fmt::format("  throughput   {:.0f} tokens/s, MFU {:.1f}%\n", r.tokens_per_s(), 100.0 * r.mfu());
  if (r.has_cost()) {
    const auto& c = r.cost();
    out += fmt::format("  cost         ${:.3g} per million tokens: ${:.3g}M capital (network ${:.3g}M) over {:g} years at "
                       "{:.0f}% utilisation\n",
                       c.usd_per_million_tokens(), c.capital_usd() / 1e6, c.network_usd() / 1e6, c.amortisation_years(),
                       100.0 * c.utilisation());
  }
  out += fmt::format("  breakdown    compute {:.1f}%, recompute {:.1f}%, exposed communication {:.1f}%, bubble {:.1f}%\n",
                     share(b.compute()), share(b.recompute()), share(b.communication()), share(b.bubble()));
  out += fmt::format("  peak memory  {} on rank {} (limit {})\n", format_bytes(Bytes(static_cast<std::uint64_t>(peak))),
                     peak_rank, format_bytes(Bytes(static_cast<std::uint64_t>(r.memory_limit_bytes()))));
  out += trace_ranks_line(r);
  out += fmt::format("  took         planning {:.3f} s, simulation {:.3f} s\n", result.plan_time_s, result.simulation_time_s);
  return out;
}

}  // namespace eppsim
