#pragma once
// `eppsim compare`: several strategies on the same sampled global batch (the
// scenario's seed), cluster and engine, side by side. The batch is sampled
// once and planned by every strategy; a strategy that cannot plan or simulate
// it (an InputError, e.g. the batch does not fit in memory) is reported as a
// failure and the others still run.
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/plan/planner.h"
#include "sim/run.h"
#include "proto/report.pb.h"
#include "scenario/scenario.h"

namespace eppsim {

struct ComparisonResult {
  proto::Comparison comparison;  // what compare.json holds
  std::vector<RunResult> runs;   // parallel to comparison.records()
};

// "a,b,c" -> {"a", "b", "c"}, each a known strategy, none twice; an empty
// list, an empty name, an unknown name (the message lists the known ones) or a
// repeated one is an InputError.
std::vector<std::string> parse_strategy_list(std::string_view list);

// Runs the named strategies (known, distinct) on the scenario's batch, in
// order, each planner built by make_planner as `run` builds it: a strategy
// whose options break its rules is reported as that strategy's failure.
ComparisonResult compare_strategies(const ResolvedScenario& scenario, const std::vector<std::string>& strategies);

// A strategy to compare: its name and how its planner is built from the
// scenario with plan.strategy set to that name.
struct PlannerFactory {
  std::string name;
  std::function<std::unique_ptr<Planner>(const ResolvedScenario&)> make;
};

// The same with the planners given (the seam for tests): each is built and
// plans the one sampled batch with the scenario's plan.strategy set to its
// name; an InputError from either step is that strategy's failure.
ComparisonResult compare_planners(const ResolvedScenario& scenario, std::span<const PlannerFactory> planners);

// The networks of `eppsim compare --networks` (sim/cli): "all" is the
// scenario's network (its topology, or the simple cluster) then each of
// cluster.compare_topologies; otherwise a comma-separated list of their
// names, "simple" included. InputError for an unknown or repeated name.
std::vector<std::string> parse_network_list(std::string_view list, const ResolvedScenario& scenario);

// Every strategy on each network: `per_network[i]` is the scenario resolved
// with cluster.network set to the i-th network. The same sampled batch runs
// everywhere (it depends on the workload and seed only). Records and failures
// are in network order, then strategy order.
ComparisonResult compare_on_networks(std::span<const ResolvedScenario> per_network,
                                     const std::vector<std::string>& strategies);

// A record's name in the comparison: its strategy, or STRATEGY@NETWORK when
// several networks are compared.
std::string record_name(const proto::Comparison& comparison, const proto::Report& record);

// speedup[A][B] = B's step time / A's for every pair of records (A == B gives
// exactly 1), A and B their record_names. Records must have positive step times.
void fill_speedups(proto::Comparison* comparison);
// comparison.speedup[a][b] (record names); std::out_of_range when either is missing.
double speedup(const proto::Comparison& comparison, const std::string& a, const std::string& b);

// compare.json: the comparison as to_json (base/proto_io.h) prints it, but
// with map keys in sorted order, so that the same inputs give the same file.
std::string comparison_json(const proto::Comparison& comparison);

// strategy,network,step_time_s,tokens_per_s,mfu,peak_memory_bytes,bubble_share,communication_share,
// speedup_over_<B> for each record B that ran (by record name), then error. One row per
// strategy asked for, in order: those that ran, then those that failed (their
// numbers empty, their message in `error`). peak_memory_bytes is the maximum
// over ranks; the shares are the mean breakdown's bubble and exposed
// communication over the step time.
std::string comparison_csv(const proto::Comparison& comparison);

// A table for people: one line per strategy, then the failures.
std::string comparison_summary(const proto::Comparison& comparison);

// DIR/compare.json, DIR/compare.csv and, per record that ran, DIR/NAME/ (its record name)
// with the usual run files (write_run_directory); DIR is replaced as a whole
// (sim/output_directory.h).
void write_comparison_directory(const ComparisonResult& result, const std::filesystem::path& dir,
                                const RunOutputs& outputs = {});

}  // namespace eppsim
