#include "sim/run.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/errors.h"
#include "sim/engine/analytic_engine.h"
#include "sim/engine/engine_registry.h"
#include "sim/engine/network_model.h"
#include "sim/engine/topology_network.h"
#include "sim/plan/milp.h"
#include "sim/plan/planner.h"
#include "traces/chrome_trace.h"
#include "traces/csv_export.h"
#include "traces/proto_io.h"
#include "traces/trace_report.h"

namespace eppsim {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::uint32_t> node_of_ranks(const proto::Schedule& schedule, const ClusterSpec& cluster,
                                         const std::vector<std::uint32_t>& live_nodes) {
  std::vector<std::uint32_t> nodes(schedule.num_ranks());
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    nodes[r] = schedule.placement_size() > 0 ? schedule.placement(static_cast<int>(r)).node() : cluster.node_of(r);
    if (nodes[r] >= cluster.nodes) {
      throw InputError(fmt::format("schedule: rank {} is placed on node {}, but the cluster has {} nodes", r, nodes[r],
                                   cluster.nodes));
    }
    if (std::find(live_nodes.begin(), live_nodes.end(), nodes[r]) == live_nodes.end()) {
      throw InputError(fmt::format("schedule: rank {} is placed on node {}, which cluster.failures lists as failed", r,
                                   nodes[r]));
    }
  }
  return nodes;
}

}  // namespace

PlannedBatch plan_scenario(const ResolvedScenario& scenario) {
  const auto start = std::chrono::steady_clock::now();
  const auto planner = make_planner(scenario.strategy, scenario);
  const auto lengths = sample_batch(scenario);
  PlannedBatch planned;
  planned.schedule = planner->plan(scenario, lengths);
  planned.plan_time_s = seconds_since(start);
  return planned;
}

RunResult simulate_schedule(proto::Schedule schedule, const ResolvedScenario& cluster, double plan_time_s) {
  const EngineInfo& engine = find_engine(cluster.engine, cluster.source + ": simulation.engine");
  if (schedule.num_ranks() > cluster.usable_gpus()) {
    throw InputError(fmt::format("schedule has {} ranks but {} has only {} usable GPUs", schedule.num_ranks(),
                                 cluster.source, cluster.usable_gpus()));
  }
  const auto start = std::chrono::steady_clock::now();
  const auto nodes = node_of_ranks(schedule, cluster.cluster, cluster.live_nodes);
  // With a topology, every transfer is routed over its links; without, the
  // closed forms of the simple cluster apply.
  std::unique_ptr<Topology> topology;
  std::unique_ptr<NetworkModel> network;
  if (cluster.topology) {
    topology = build_topology(*cluster.topology);
    std::vector<VertexId> chips(schedule.num_ranks());
    for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
      const std::uint32_t local =
          schedule.placement_size() > 0 ? schedule.placement(static_cast<int>(r)).local_gpu() : cluster.cluster.local_gpu_of(r);
      chips[r] = nodes[r] * cluster.cluster.gpus_per_node + local;
    }
    for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
      if (chips[r] >= (nodes[r] + 1) * cluster.cluster.gpus_per_node) {
        throw InputError(fmt::format("schedule: rank {} is placed on local GPU {} of node {}, which has {} GPUs", r,
                                     chips[r] - nodes[r] * cluster.cluster.gpus_per_node, nodes[r],
                                     cluster.cluster.gpus_per_node));
      }
    }
    network = std::make_unique<TopologyNetwork>(*topology, std::move(chips));
  } else {
    network = std::make_unique<SimpleClusterNetwork>(cluster.cluster.intra_node, cluster.cluster.inter_node, nodes);
  }
  const auto cost = compat_cost_model(*network, *cluster.compute_cost, cluster.cluster.gpu);
  RunResult result;
  result.trace = engine.run(schedule, EngineContext{*cost});
  RunContext context;
  context.scenario = cluster.proto.name();
  context.peak_flops_per_gpu = cluster.cluster.gpu.peak_bf16.value;
  context.seed = cluster.seed;
  result.report = build_report(result.trace, schedule, context);
  result.plan_time_s = plan_time_s;
  result.simulation_time_s = seconds_since(start);
  result.schedule = std::move(schedule);
  result.scenario = cluster.proto;
  return result;
}

RunResult run_scenario(const ResolvedScenario& scenario) {
  auto planned = plan_scenario(scenario);
  return simulate_schedule(std::move(planned.schedule), scenario, planned.plan_time_s);
}

double peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports kilobytes
}

void write_run_directory(const RunResult& result, const std::filesystem::path& dir) {
  const auto start = std::chrono::steady_clock::now();
  std::filesystem::create_directories(dir);
  write_message(result.report, dir / "report.json");
  write_message(result.scenario, dir / "scenario.textproto");
  write_message(result.trace, dir / "trace.pb");
  write_message(result.schedule, dir / "schedule.pb");
  write_chrome_trace(result.trace, dir / "trace.json");
  write_ops_csv(result.trace, dir / "ops.csv");
  write_memory_csv(result.trace, dir / "memory.csv");
  write_ranks_csv(result.report, dir / "ranks.csv");
  proto::Timings timings;
  timings.set_plan_time_s(result.plan_time_s);
  timings.set_simulation_time_s(result.simulation_time_s);
  timings.set_write_time_s(seconds_since(start));
  timings.set_peak_rss_bytes(peak_rss_bytes());
  write_message(timings, dir / "timings.json");
}

std::string plan_decisions_summary(const proto::PlanDecisions& d, std::string_view indent) {
  if (d.ranks() == 0) return {};
  // Line 1: the layout.
  std::string sp;
  for (int i = 0; i < d.sp_degrees_size(); ++i) sp += fmt::format("{}{}", i > 0 ? "/" : "", d.sp_degrees(i));
  std::string layout = fmt::format("{} stage{} x {} SP", d.pipeline_stages(), d.pipeline_stages() == 1 ? "" : "s", sp);
  if (d.tensor_parallel() > 1) layout += fmt::format(" x {} TP", d.tensor_parallel());
  if (d.context_parallel() > 1) layout += fmt::format(" x {} CP", d.context_parallel());
  layout += fmt::format(" x {} DP", d.data_parallel());
  // SP degrees that vary per micro-batch (FlexSP) do not multiply out.
  std::string out = d.sp_degrees_size() > 1 ? fmt::format("{}, {} ranks", layout, d.ranks())
                                            : fmt::format("{} = {} ranks", layout, d.ranks());
  if (!d.reproduces().empty()) out += fmt::format(" ({})", d.reproduces());
  out += "\n";
  // Line 2: chunks, recomputation, solves.
  std::vector<std::string> parts;
  std::string chunking;
  if (d.slice_counts_size() > 0) {
    std::string ks;
    for (int i = 0; i < d.slice_counts_size(); ++i) ks += fmt::format("{}{}", i > 0 ? "/" : "", d.slice_counts(i));
    chunking += fmt::format("K={}, ", ks);
  }
  if (d.pipelines() > 0) chunking += fmt::format("{} pipeline{}, ", d.pipelines(), d.pipelines() == 1 ? "" : "s");
  chunking += fmt::format("{} chunk{}", d.chunks(), d.chunks() == 1 ? "" : "s");
  if (d.micro_batch_groups_size() > 0) {
    std::string groups;
    for (int j = 0; j < d.micro_batch_groups_size() && j < 4; ++j) {
      std::string sizes;
      for (int g = 0; g < d.micro_batch_groups(j).sp_degrees_size(); ++g) {
        sizes += fmt::format("{}{}", g > 0 ? "+" : "", d.micro_batch_groups(j).sp_degrees(g));
      }
      groups += fmt::format("{}{}", j > 0 ? ", " : "", sizes);
    }
    if (d.micro_batch_groups_size() > 4) groups += ", ...";
    chunking += fmt::format(" (SP groups {})", groups);
  }
  parts.push_back(chunking);
  if (d.layer_chunks() > 0) {
    parts.push_back(fmt::format("checkpointing {} of {} layer-chunks", d.checkpointed_layer_chunks(), d.layer_chunks()));
  }
  if (d.solves_size() > 0) {
    std::map<int, int> counts;
    for (const auto& solve : d.solves()) ++counts[solve.status()];
    std::string statuses;
    for (const auto& [status, count] : counts) {
      statuses += fmt::format("{}{} {}", statuses.empty() ? "" : ", ", count,
                              solve_status_name(static_cast<proto::SolveStatus>(status)));
    }
    parts.push_back(fmt::format("MILPs: {}", statuses));
  }
  out += fmt::format("{}{}\n", indent, fmt::join(parts, "; "));
  return out;
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
  out += fmt::format("eppsim {}: {} ({}, {} engine)\n", r.eppsim_version(), r.scenario(), r.strategy(), r.engine());
  const std::string plan = plan_decisions_summary(r.plan(), "               ");
  if (plan.empty()) {
    out += fmt::format("  ranks        {} ({} pipeline stages x {} data-parallel), {} micro-batches\n", r.ranks(),
                       r.pipeline_stages(), r.data_parallel(), r.micro_batches());
  } else {
    out += "  plan         " + plan;
  }
  out += fmt::format("  step time    {:.4f} s for {} sequences, {:.0f} tokens\n", step, r.sequences(), r.tokens());
  out += fmt::format("  throughput   {:.0f} tokens/s, MFU {:.1f}%\n", r.tokens_per_s(), 100.0 * r.mfu());
  out += fmt::format("  breakdown    compute {:.1f}%, recompute {:.1f}%, exposed communication {:.1f}%, bubble {:.1f}%\n",
                     share(b.compute()), share(b.recompute()), share(b.communication()), share(b.bubble()));
  out += fmt::format("  peak memory  {} on rank {} (limit {})\n", format_bytes(Bytes(static_cast<std::uint64_t>(peak))),
                     peak_rank, format_bytes(Bytes(static_cast<std::uint64_t>(r.memory_limit_bytes()))));
  out += fmt::format("  took         planning {:.3f} s, simulation {:.3f} s\n", result.plan_time_s, result.simulation_time_s);
  return out;
}

}  // namespace eppsim
