#include "sim/sweep/sweep_runner.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/log.h"
#include "base/progress.h"
#include "base/proto_io.h"
#include "scenario/scenario.h"
#include "sim/html_report.h"
#include "base/subprocess.h"
#include "traces/csv_export.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;

}  // namespace

fs::path sweep_point_file(const fs::path& dir, const std::string& key) { return dir / "points" / (key + ".json"); }

EffectivePoint effective_point(const SweepPlan& plan, const SweepPointSpec& point) {
  EffectivePoint out;
  try {
    // As parse_scenario_file(its base's file, point.overrides) gives it, without reading the file again.
    out.scenario = plan.bases[point.base].scenario;
    for (const std::string& assignment : point.overrides) apply_override(&out.scenario, assignment);
    out.key = point_key(out.scenario);
  } catch (const InputError& e) {
    out.error = e.what();
    proto::Scenario overrides_only;  // a key for a point whose overrides do not apply: its overrides
    for (const auto& o : point.overrides) overrides_only.mutable_description()->append(o + "\n");
    out.key = point_key(overrides_only);
  }
  return out;
}

proto::SweepPoint sweep_point_record(const SweepPlan& plan, const SweepPointSpec& point, const std::string& key) {
  proto::SweepPoint record;
  record.set_index(point.index);
  record.set_key(key);
  for (std::size_t a = 0; a < plan.axes.size(); ++a) {
    auto* value = record.add_values();
    value->set_axis(plan.axes[a]);
    value->set_value(point.values[a]);
  }
  return record;
}

std::optional<proto::SweepPoint> read_sweep_point(const std::filesystem::path& file) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return std::nullopt;
  try {
    proto::SweepPoint point;
    read_message(file, &point);
    return point;
  } catch (const std::exception&) {
    return std::nullopt;  // not a point's file (a crash cannot leave half of one: they are written, then renamed)
  }
}

bool SweepMemoryBudget::fits(double gpus, std::size_t running, double running_bytes) const {
  if (running == 0) return true;
  if (per_gpu_ <= 0.0) return false;
  return available_ <= 0.0 || running_bytes + estimate(gpus) <= available_;
}

void SweepMemoryBudget::finished(double gpus, double peak_rss_bytes) {
  if (gpus > 0.0) per_gpu_ = std::max(per_gpu_, peak_rss_bytes / gpus);
}

namespace {

// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
double available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  double kib = 0.0;
  std::string unit;
  while (meminfo >> name >> kib >> unit) {
    if (name == "MemAvailable:") return kib * 1024.0;
  }
  return 0.0;
}

double gpus_of(const proto::Scenario& scenario) {
  return std::max(1.0, static_cast<double>(scenario.cluster().nodes()) * scenario.cluster().gpus_per_node());
}

struct Running {
  RunningProcess process;
  const SweepPointSpec* point;
  std::string key;
  double gpus;
  double estimate_bytes;  // 0: unknown
};

}  // namespace

SweepTally run_sweep_share(const SweepPlan& plan, const SweepOptions& options, const SweepShare& share) {
  SweepTally tally;
  std::vector<std::pair<const SweepPointSpec*, EffectivePoint>> todo;
  for (const SweepPointSpec& point : plan.points) {
    if (point.index % share.count != share.rank) continue;
    ++tally.points;
    EffectivePoint effective = effective_point(plan, point);
    if (const auto done = read_sweep_point(sweep_point_file(options.output, effective.key)); done && !done->rerun()) {
      ++tally.resumed;
      continue;
    }
    todo.emplace_back(&point, std::move(effective));
  }
  const std::uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::uint32_t jobs = options.jobs > 0 ? options.jobs : std::max(1u, cores / std::max(1u, share.on_this_node));
  SweepMemoryBudget memory(0.9 * available_memory_bytes());
  logging::info("sweep", "{}: {} of {} points to run here ({} done before), {} at once", plan.file.string(),
                todo.size(), tally.points, tally.resumed, jobs);

  progress::ProgressLine line("sweeping", progress::Options{.quiet_for_s = 0.5, .check_every = 1});
  const auto start = std::chrono::steady_clock::now();
  std::list<Running> running;  // started in order, ended in any
  std::size_t next = 0;
  const auto in_flight_bytes = [&] {
    double sum = 0.0;
    for (const Running& r : running) sum += r.estimate_bytes;
    return sum;
  };
  while (next < todo.size() || !running.empty()) {
    // Start what fits: by count, and by memory once a finished point has told us its size.
    while (next < todo.size() && running.size() < jobs) {
      const double gpus = gpus_of(todo[next].second.scenario);
      if (!memory.fits(gpus, running.size(), in_flight_bytes())) break;
      const double estimate = memory.estimate(gpus);
      ProcessRequest request;
      request.argv = {options.eppsim.string(), "sweep", plan.file.string(), "-o", options.output.string(), "--point",
                      std::to_string(todo[next].first->index), "--outputs", options.outputs, "--log", "warn"};
      running.emplace_back(Running{RunningProcess(request), todo[next].first, todo[next].second.key, gpus, estimate});
      ++next;
    }
    bool ended = false;
    for (auto it = running.begin(); it != running.end();) {
      const std::optional<ProcessResult> result = it->process.poll();
      if (!result) {
        ++it;
        continue;
      }
      ended = true;
      ++tally.ran;
      const fs::path file = sweep_point_file(options.output, it->key);
      std::optional<proto::SweepPoint> point = read_sweep_point(file);
      if (!point) {
        proto::SweepPoint failed = sweep_point_record(plan, *it->point, it->key);
        failed.set_error(fmt::format("its process ended without a result: {}", result->describe()));
        failed.set_rerun(true);
        write_message(failed, file);
        point = failed;
      }
      if (!point->error().empty()) ++tally.failed;
      memory.finished(it->gpus, point->peak_rss_bytes());
      it = running.erase(it);
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    line.update([&] {
      const double done = tally.ran;
      const double eta = done > 0 ? elapsed / done * static_cast<double>(todo.size() - tally.ran) : 0.0;
      return fmt::format("{} of {} points, {} failed, {:.0f} s, about {:.0f} s left", tally.ran + tally.resumed,
                         tally.points, tally.failed, elapsed, eta);
    });
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return tally;
}

namespace {

// results.csv of a training sweep: a row per point.
std::string training_rows(const SweepPlan& plan, const proto::SweepResults& results) {
  // Cost rank: 1 for the cheapest million tokens among the points that have a cost.
  std::vector<const proto::SweepPoint*> priced;
  for (const auto& point : results.results()) {
    if (point.error().empty() && point.report().has_cost()) priced.push_back(&point);
  }
  std::stable_sort(priced.begin(), priced.end(), [](const proto::SweepPoint* a, const proto::SweepPoint* b) {
    return a->report().cost().usd_per_million_tokens() < b->report().cost().usd_per_million_tokens();
  });
  std::map<std::uint32_t, std::size_t> rank;  // by index (with --points, indices need not run 0 to n-1)
  for (std::size_t k = 0; k < priced.size(); ++k) rank[priced[k]->index()] = k + 1;

  std::string csv = "index";
  for (const auto& axis : plan.axes) csv += "," + csv_field(axis);
  csv += ",status,network,step_time_s,tokens_per_s,mfu,peak_memory_bytes,compute_s,recompute_s,communication_s,bubble_s,"
         "capital_usd,usd_per_million_tokens,cost_rank,micro_batches,pipeline_stages,data_parallel,plan,error\n";
  for (const proto::SweepPoint& point : results.results()) {
    csv += std::to_string(point.index());
    for (const auto& value : point.values()) csv += "," + csv_field(value.value());
    if (!point.error().empty()) {
      csv += ",failed,,,,,,,,,,,,,,,,," + csv_field(point.error()) + "\n";
      continue;
    }
    const proto::Report& r = point.report();
    double peak = 0.0;
    for (const double bytes : r.peak_memory_bytes()) peak = std::max(peak, bytes);
    const std::string plan_line = r.plan_summary().substr(0, r.plan_summary().find('\n'));
    const std::string cost = r.has_cost() ? fmt::format("{},{},{}", r.cost().capital_usd(),
                                                        r.cost().usd_per_million_tokens(), rank[point.index()])
                                          : std::string(",,");
    csv += fmt::format(",ok,{},{},{},{},{},{},{},{},{},{},{},{},{},{},\n", csv_field(r.network()), r.step_time_s(),
                       r.tokens_per_s(), r.mfu(), peak, r.breakdown_s().compute(), r.breakdown_s().recompute(),
                       r.breakdown_s().communication(), r.breakdown_s().bubble(), cost, r.micro_batches(),
                       r.pipeline_stages(), r.data_parallel(), csv_field(plan_line));
  }
  return csv;
}

// results.csv of a topo sweep: a row per point and network (the scenario's,
// then those it is compared with), with each network's cost per unit of
// all-reduce and all-to-all bandwidth against the study's non-blocking
// fat-tree (whose per-chip all-reduce and all-to-all rates are its injection).
std::string topology_rows(const SweepPlan& plan, const proto::SweepResults& results) {
  std::string csv = "index";
  for (const auto& axis : plan.axes) csv += "," + csv_field(axis);
  csv += ",status,network,kind,chips,diameter_hops,inter_node_diameter_hops,bisection_bandwidth_Bps,"
         "allreduce_bandwidth_Bps,alltoall_bandwidth_Bps,cost_usd,cost_per_allreduce_Bps,cost_per_alltoall_Bps,"
         "allreduce_cost_vs_fat_tree,alltoall_cost_vs_fat_tree,fat_tree_usd,error\n";
  for (const proto::SweepPoint& point : results.results()) {
    std::string head = std::to_string(point.index());
    for (const auto& value : point.values()) head += "," + csv_field(value.value());
    if (!point.error().empty()) {
      csv += head + ",failed,,,,,,,,,,,,,,," + csv_field(point.error()) + "\n";
      continue;
    }
    const proto::TopologyReport& main = point.topology();
    const auto& ft = main.fat_tree();
    const double ft_per_Bps = ft.injection_bandwidth_bps() > 0.0 ? ft.cost_usd() / ft.injection_bandwidth_bps() : 0.0;
    const auto versus = [&](double per_Bps) { return ft_per_Bps > 0.0 ? per_Bps / ft_per_Bps : 0.0; };
    const auto row = [&](const proto::TopologyReport& r) {
      csv += head + fmt::format(",ok,{},{},{},{},{},{},{},{},{},{},{},{},{},{},\n", csv_field(r.name()), csv_field(r.kind()),
                                r.chips(), r.diameter_hops(), r.inter_node_diameter_hops(), r.bisection_bandwidth_bps(),
                                r.allreduce_bandwidth_bps(), r.alltoall_bandwidth_bps(), r.cost_usd(),
                                r.cost_per_allreduce_bps(), r.cost_per_alltoall_bps(), versus(r.cost_per_allreduce_bps()),
                                versus(r.cost_per_alltoall_bps()), ft.cost_usd());
    };
    row(main);
    for (const auto& comparison : main.comparisons()) row(comparison);
  }
  return csv;
}

}  // namespace

std::uint32_t write_sweep_results(const SweepPlan& plan, const fs::path& dir) {
  proto::SweepResults results;
  results.set_sweep(plan.sweep.name());
  for (std::size_t a = 0; a < plan.axes.size(); ++a) {
    proto::SweepAxis* axis = results.add_axes();
    *axis = plan.sweep.axes(static_cast<int>(a));
    axis->set_name(plan.axes[a]);
  }
  std::uint32_t failed = 0;
  for (const SweepPointSpec& spec : plan.points) {
    const EffectivePoint effective = effective_point(plan, spec);
    proto::SweepPoint point =
        read_sweep_point(sweep_point_file(dir, effective.key)).value_or(sweep_point_record(plan, spec, effective.key));
    if (!point.has_report() && !point.has_topology() && point.error().empty())
      point.set_error("no result: the point has not run");
    point.set_index(spec.index);  // the same scenario may sit at another index in an edited sweep
    point.clear_wall_s();
    point.clear_peak_rss_bytes();
    failed += point.error().empty() ? 0 : 1;
    *results.add_results() = std::move(point);
  }
  const std::string csv = plan.sweep.command() == "topo" ? topology_rows(plan, results) : training_rows(plan, results);
  results.set_points(static_cast<std::uint32_t>(plan.points.size()));
  results.set_failed(failed);
  write_file_atomically(dir / "results.csv", csv);
  write_file_atomically(dir / "results.json", to_json(results));
  return failed;
}

std::string finish_sweep(const SweepPlan& plan, const SweepOptions& options, const SweepTally& tally, double wall_s,
                         std::uint32_t processes) {
  const std::uint32_t failed = write_sweep_results(plan, options.output);
  std::string summary = fmt::format(
      "sweep {}: {} points ({} run now, {} found done), {} failed, {:.1f} s{}\n"
      "  wrote        {}/{{results.csv, results.json, points/}}\n",
      plan.sweep.name().empty() ? plan.file.string() : plan.sweep.name(), plan.points.size(), tally.ran, tally.resumed,
      failed, wall_s, processes > 1 ? fmt::format(" over {} processes", processes) : "", options.output.string());
  if (options.html) summary += fmt::format("  page         {}\n", write_html_report(options.output).string());
  return summary;
}

}  // namespace eppsim
