#pragma once
// `eppsim sweep SWEEP -o DIR`: every point of a sweep (sweep_file.h) run as
// `eppsim run` would run it, each in a process of its own (sweep_point.h), and
// the results collected.
//
// Points. Each point runs in a child process (`eppsim sweep SWEEP -o DIR
// --point N`), so that a crash or an out-of-memory kill ends that point only.
// It writes DIR/points/KEY.json (proto SweepPoint: its values, its report or
// its error) atomically, KEY its scenario's hash (point_key); with run outputs
// asked for (--outputs), also DIR/runs/KEY/ as `eppsim run -o` writes it. A
// point whose scenario fails to resolve, plan or simulate (an InputError, an
// impossible combination) records the error; one whose process dies records
// how it ended. Neither stops the others.
//
// Resuming. A point whose DIR/points/KEY.json exists and reads back is not run
// again: rerunning a sweep runs only what is missing (or what changed: a new
// key, or a point whose process died), and an interrupted sweep loses only
// the points in flight.
//
// Workers. Up to `jobs` points at once (default: the cores, shared out among
// the sweep's processes on this node under mpirun). Memory-aware: a point is
// started only while the running points' estimated memory, plus its own, fits
// in the memory available when the sweep started (MemAvailable, less 10%); a
// point's estimate is its GPUs times the largest peak resident set per GPU of
// the points finished so far, and until one has finished, points run one at a
// time.
//
// Across machines. Under `mpirun -np N eppsim sweep ...` each process becomes
// eppsim-sweep-mpi (sweep_ranks.h: Open MPI's ranks, apart from eppsim, whose
// SimGrid exports MPI symbols of its own); the processes split the points
// round-robin by index, each running its share as
// above; DIR must be one folder all of them see. When all are done, rank 0
// writes the results.
//
// Results (write_sweep_results): DIR/results.csv, one row per point in grid
// order: index, the axes' values, status (ok or failed), network (the one the
// point ran on: cluster.network is an axis like any other), step_time_s,
// tokens_per_s, mfu, peak_memory_bytes (the largest over ranks), the mean
// breakdown's compute_s, recompute_s, communication_s and bubble_s, capital_usd,
// usd_per_million_tokens and cost_rank (1: the cheapest million tokens of the
// sweep; empty where the GPUs have no price, proto ClusterCost),
// micro_batches, pipeline_stages, data_parallel, the plan summary's first line
// and the error; for a topo sweep (command "topo"), a row per point and network
// instead: its kind, chips, diameters, bandwidths, cost, cost per unit of
// all-reduce and all-to-all bandwidth and those against the non-blocking
// fat-tree of the same chips; DIR/results.json (proto SweepResults), the same
// points whole.
// Neither holds wall-clock figures: the same sweep gives the same files with
// any number of workers or processes.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "sim/sweep/sweep_file.h"

namespace eppsim {

struct SweepOptions {
  std::filesystem::path eppsim;   // the eppsim program, which runs each point
  std::filesystem::path output;   // DIR
  std::uint32_t jobs = 0;         // points at once; 0: the default above
  std::string outputs = "none";   // --outputs for each point's run directory ("none": no DIR/runs/)
  std::string points;             // --points: run and report only these (select_points); empty: all
  bool html = false;              // --html: also DIR/report.html, the sweep's page (plots/report.py)
};

// This process's share of the points under mpirun: those whose index % count == rank.
struct SweepShare {
  std::uint32_t rank = 0;
  std::uint32_t count = 1;
  std::uint32_t on_this_node = 1;  // the sweep's processes on this machine, which share its cores
};

struct SweepTally {
  std::uint32_t points = 0;   // in this share
  std::uint32_t resumed = 0;  // found finished
  std::uint32_t ran = 0;
  std::uint32_t failed = 0;   // of those run now
};

// The memory side of "Workers" above: a point's estimate is its GPUs times
// the largest peak resident set per GPU of the points finished so far.
class SweepMemoryBudget {
 public:
  // `available_bytes`: what the running points may take together; 0 when
  // unknown (then only the first rule below applies).
  explicit SweepMemoryBudget(double available_bytes) : available_(available_bytes) {}
  // 0 until a point has finished.
  double estimate(double gpus) const { return per_gpu_ * gpus; }
  // Whether a point of `gpus` GPUs may start while points estimated at
  // `running_bytes` in all (`running` of them) run: always when none runs,
  // never before a point has finished, else when the estimates fit.
  bool fits(double gpus, std::size_t running, double running_bytes) const;
  void finished(double gpus, double peak_rss_bytes);

 private:
  double available_;
  double per_gpu_ = 0.0;
};

// A point's effective scenario (the base with its overrides) and key; when
// its overrides do not apply together, the error, and a key of the overrides.
struct EffectivePoint {
  proto::Scenario scenario;
  std::string key;
  std::string error;
};
EffectivePoint effective_point(const SweepPlan& plan, const SweepPointSpec& point);
// DIR/points/KEY.json.
std::filesystem::path sweep_point_file(const std::filesystem::path& dir, const std::string& key);
// A point's record with its index, key and values, not yet its outcome.
proto::SweepPoint sweep_point_record(const SweepPlan& plan, const SweepPointSpec& point, const std::string& key);
// The point in `file`; nullopt when there is none or it does not read back.
std::optional<proto::SweepPoint> read_sweep_point(const std::filesystem::path& file);

// Runs this share's unfinished points in child processes, as above, with a
// progress line on a terminal.
SweepTally run_sweep_share(const SweepPlan& plan, const SweepOptions& options, const SweepShare& share);

// Once every point has run: writes the results (write_sweep_results) and,
// with options.html, the sweep's page; returns the lines `eppsim sweep`
// prints at the end. `processes`: the sweep's processes (mpirun's ranks).
std::string finish_sweep(const SweepPlan& plan, const SweepOptions& options, const SweepTally& tally, double wall_s,
                         std::uint32_t processes);

// Reads every point's file and writes DIR/results.csv and DIR/results.json
// atomically; a point without a readable file is a failed row ("no result").
// Returns the number of failed points.
std::uint32_t write_sweep_results(const SweepPlan& plan, const std::filesystem::path& dir);

}  // namespace eppsim
