#include "sim/output_directory.h"
#include "sim/compare.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"
#include "base/units.h"
#include "traces/csv_export.h"
#include "base/proto_io.h"

namespace eppsim {
namespace {

double max_peak_memory(const proto::Report& r) {
  double peak = 0;
  for (const double bytes : r.peak_memory_bytes()) peak = std::max(peak, bytes);
  return peak;
}

double share(const proto::Report& r, double part) { return r.step_time_s() > 0 ? part / r.step_time_s() : 0.0; }

// A record's name becomes a directory of the output: no separators, no dot names.
void check_directory_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find_first_of("/\\") != std::string::npos) {
    throw InputError(fmt::format("'{}' cannot name a directory of the comparison (a strategy or network name with a "
                                 "path separator, or a dot name)", name));
  }
}

// "a,b,c" -> {"a", "b", "c"} (spaces around names forgiven), each one of
// `known`, none twice; InputError naming `option` otherwise.
std::vector<std::string> parse_name_list(std::string_view list, std::string_view option, std::string_view what,
                                         const std::vector<std::string>& known) {
  std::vector<std::string> names;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = list.find(',', begin);
    std::string name(list.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin));
    const auto first = name.find_first_not_of(' ');
    name = first == std::string::npos ? std::string() : name.substr(first, name.find_last_not_of(' ') - first + 1);
    if (name.empty())
      throw InputError(fmt::format("{}: empty {} name in '{}' (known: {})", option, what, list, fmt::join(known, ", ")));
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InputError(fmt::format("{}: unknown {} '{}' (known: {})", option, what, name, fmt::join(known, ", ")));
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw InputError(fmt::format("{}: '{}' is listed twice", option, name));
    names.push_back(std::move(name));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return names;
}

}  // namespace

std::vector<std::string> parse_strategy_list(std::string_view list) {
  return parse_name_list(list, "--strategies", "strategy", planner_names());
}

ComparisonResult compare_strategies(const ResolvedScenario& scenario, const std::vector<std::string>& strategies) {
  // Each strategy's planner is built the way `run` builds it (make_planner:
  // the registry resolves and checks that strategy's options), so a setting
  // that `run` rejects fails that strategy here too.
  const auto known = planner_names();
  std::vector<PlannerFactory> planners;
  planners.reserve(strategies.size());
  for (const auto& name : strategies) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw InputError(fmt::format("compare: unknown strategy '{}' (known: {})", name, fmt::join(known, ", ")));
    }
    planners.push_back(PlannerFactory{name, [name](const ResolvedScenario& own) { return make_planner(name, own); }});
  }
  return compare_planners(scenario, planners);
}

std::vector<std::string> parse_network_list(std::string_view list, const ResolvedScenario& scenario) {
  std::vector<std::string> known{scenario.cluster.network_name()};
  for (const auto& other : scenario.cluster.compare_topologies) known.push_back(other.name);
  if (list == "all") return known;
  if (scenario.cluster.topology) known.emplace_back(kSimpleNetworkName);
  return parse_name_list(list, "--networks", "network", known);
}

ComparisonResult compare_on_networks(std::span<const ResolvedScenario> per_network,
                                     const std::vector<std::string>& strategies) {
  ComparisonResult all;
  for (const ResolvedScenario& scenario : per_network) check_directory_name(scenario.cluster.network_name());
  for (const ResolvedScenario& scenario : per_network) {
    ComparisonResult one = compare_strategies(scenario, strategies);
    all.comparison.add_networks(scenario.cluster.network_name());
    for (auto& record : *one.comparison.mutable_records()) *all.comparison.add_records() = std::move(record);
    for (auto& failure : *one.comparison.mutable_failures()) {
      failure.set_network(scenario.cluster.network_name());
      *all.comparison.add_failures() = std::move(failure);
    }
    for (auto& run : one.runs) all.runs.push_back(std::move(run));
  }
  fill_speedups(&all.comparison);
  return all;
}

std::string record_name(const proto::Comparison& comparison, const proto::Report& record) {
  return comparison.networks_size() > 1 ? record.strategy() + "@" + record.network() : record.strategy();
}

ComparisonResult compare_planners(const ResolvedScenario& scenario, std::span<const PlannerFactory> planners) {
  if (planners.empty()) throw InputError("compare: no strategies to compare");
  std::set<std::string> seen;
  for (const PlannerFactory& planner : planners) {
    check_directory_name(planner.name);
    if (!seen.insert(planner.name).second) throw InputError(fmt::format("compare: strategy '{}' is listed twice", planner.name));
  }
  // One batch for all: the comparison is between strategies, not samples.
  const auto lengths = sample_batch(scenario);
  ComparisonResult result;
  for (const PlannerFactory& planner : planners) {
    const auto& name = planner.name;
    ResolvedScenario own = scenario;
    own.plan.strategy = name;
    own.proto.mutable_plan()->set_strategy(name);
    try {
      const auto start = std::chrono::steady_clock::now();
      auto schedule = planner.make(own)->plan(PlanContext(own, simulated_step_seconds), lengths);
      schedule.set_strategy(name);  // records and directories are keyed by the name asked for
      const double plan_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      auto run = simulate_schedule(std::move(schedule), own, plan_time_s);
      run.lengths = lengths;
      if (run.report.has_faults() && !run.report.faults().step_completed()) {
        // No step time to compare: listed with the failures, saying why.
        throw InputError(fmt::format("{}: the step did not complete under the scenario's faults: {}", name,
                                     run.report.faults().stop_reason()));
      }
      if (!(run.report.step_time_s() > 0)) {
        throw InputError(fmt::format("{}: the simulated step time is {} s", name, run.report.step_time_s()));
      }
      *result.comparison.add_records() = run.report;
      result.runs.push_back(std::move(run));
    } catch (const InputError& e) {
      auto* failure = result.comparison.add_failures();
      failure->set_strategy(name);
      failure->set_message(e.what());
    }
  }
  fill_speedups(&result.comparison);
  return result;
}

void fill_speedups(proto::Comparison* comparison) {
  auto& speedups = *comparison->mutable_speedup();
  speedups.clear();
  for (const auto& a : comparison->records()) {
    if (!(a.step_time_s() > 0)) {
      throw std::logic_error(fmt::format("compare: {} has step time {} s", a.strategy(), a.step_time_s()));
    }
    auto& row = *speedups[record_name(*comparison, a)].mutable_fields();
    for (const auto& b : comparison->records()) {
      row[record_name(*comparison, b)].set_number_value(&a == &b ? 1.0 : b.step_time_s() / a.step_time_s());
    }
  }
}

double speedup(const proto::Comparison& comparison, const std::string& a, const std::string& b) {
  return comparison.speedup().at(a).fields().at(b).number_value();
}

std::string comparison_json(const proto::Comparison& comparison) { return to_json(comparison); }

std::string comparison_csv(const proto::Comparison& comparison) {
  std::string out = "strategy,network,step_time_s,tokens_per_s,mfu,peak_memory_bytes,bubble_share,communication_share";
  for (const auto& b : comparison.records()) {
    out += ",";
    out += csv_field("speedup_over_" + record_name(comparison, b));
  }
  out += ",error\n";
  for (const auto& r : comparison.records()) {
    out += csv_field(r.strategy()) + "," + csv_field(r.network());
    fmt::format_to(std::back_inserter(out), ",{:.9f},{:.6g},{:.6g},{:.0f},{:.6g},{:.6g}", r.step_time_s(),
                   r.tokens_per_s(), r.mfu(), max_peak_memory(r), share(r, r.breakdown_s().bubble()),
                   share(r, r.breakdown_s().communication()));
    for (const auto& b : comparison.records()) {
      fmt::format_to(std::back_inserter(out), ",{:.6g}",
                     speedup(comparison, record_name(comparison, r), record_name(comparison, b)));
    }
    out += ",\n";
  }
  for (const auto& f : comparison.failures()) {
    out += csv_field(f.strategy()) + "," + csv_field(f.network());
    out += std::string(6 + static_cast<std::size_t>(comparison.records_size()), ',');
    out += ",";
    out += csv_field(f.message());
    out += "\n";
  }
  return out;
}

std::string comparison_summary(const proto::Comparison& comparison) {
  std::size_t width = 8, system_width = 6;
  for (const auto& r : comparison.records()) {
    width = std::max(width, record_name(comparison, r).size());
    system_width = std::max(system_width, r.plan().reproduces().size());
  }
  const auto failure_name = [&](const proto::ComparisonFailure& f) {
    return comparison.networks_size() > 1 ? f.strategy() + "@" + f.network() : f.strategy();
  };
  for (const auto& f : comparison.failures()) width = std::max(width, failure_name(f).size());
  std::string out;
  if (comparison.records_size() > 0) {
    const auto& first = comparison.records(0);
    out += fmt::format("eppsim {}: {} compared on one batch of {} sequences, {:.0f} tokens (seed {}, {} engine, {})\n",
                       first.eppsim_version(), first.scenario(), first.sequences(), first.tokens(), first.seed(),
                       first.engine(),
                       comparison.networks_size() > 1
                           ? fmt::format("networks {}", fmt::join(comparison.networks(), ", "))
                           : fmt::format("{} network", first.network()));
  }
  out += fmt::format("  {:<{}} {:<{}} {:>11} {:>12} {:>6} {:>11} {:>7} {:>7}", "strategy", width, "system",
                     system_width, "step (s)", "tokens/s", "MFU", "peak mem", "bubble", "comm");
  for (const auto& b : comparison.records()) out += fmt::format("  vs {}", record_name(comparison, b));
  out += "\n";
  for (const auto& r : comparison.records()) {
    out += fmt::format("  {:<{}} {:<{}} {:>11.4f} {:>12.0f} {:>5.1f}% {:>11} {:>6.1f}% {:>6.1f}%", record_name(comparison, r), width,
                       r.plan().reproduces(), system_width, r.step_time_s(), r.tokens_per_s(), 100.0 * r.mfu(),
                       format_bytes(Bytes(static_cast<std::uint64_t>(max_peak_memory(r)))),
                       100.0 * share(r, r.breakdown_s().bubble()), 100.0 * share(r, r.breakdown_s().communication()));
    for (const auto& b : comparison.records()) {
      const auto cell = fmt::format("{:.2f}x", speedup(comparison, record_name(comparison, r), record_name(comparison, b)));
      out += fmt::format("  {:>{}}", cell, record_name(comparison, b).size() + 3);
    }
    out += "\n";
  }
  for (const auto& f : comparison.failures()) {
    out += fmt::format("  {:<{}} failed: {}\n", failure_name(f), width, f.message());
  }
  if (comparison.records_size() > 1) out += "  (vs B: how many times faster the row's strategy is than B)\n";
  return out;
}

void write_comparison_directory(const ComparisonResult& result, const std::filesystem::path& dir,
                                const RunOutputs& outputs) {
  OutputDirectory out(dir);
  for (const auto& run : result.runs) {
    const std::string name = record_name(result.comparison, run.report);
    check_directory_name(name);
    write_run_directory(run, out.staging() / name, outputs);
  }
  write_file_atomically(out.staging() / "compare.csv", comparison_csv(result.comparison));
  write_file_atomically(out.staging() / "compare.json", comparison_json(result.comparison));
  out.commit();
}

}  // namespace eppsim
