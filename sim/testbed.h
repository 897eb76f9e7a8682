#pragma once
// `eppsim testbed SCENARIO -o DIR`: the calibrate-and-validate loop on real
// hardware, end to end, as one command:
//   1. eppsim-bench compute   the model's layers on this machine's backend
//   2. mpirun eppsim-bench comm   the collectives and point-to-point over the ranks;
//      mpirun eppsim-bench interference   with two ranks or more, the layer and
//                             each collective slowing each other (--repeats 3)
//   3. calibrate              fit the cost model to them (DIR/calibration.textproto)
//   4. plan and simulate      the scenario with that calibration (DIR/simulated/):
//                             compute priced by its fits and, where step 2
//                             measured interference, interference by its factors
//   5. mpirun eppsim-run      the very Schedule just simulated, on real kernels
//                             and MPI (DIR/measured/trace.pb); then eppsim-bench
//                             compute again at step 1's largest tokens
//                             (DIR/bench/compute-after.json), compared with step
//                             1's rows (DIR/bench/drift.json, sim/bench_drift.h):
//                             how far the machine moved since it was benchmarked
//   6. validate               simulated against measured (DIR/validation.json,
//                             DIR/timeline.csv, DIR/plots/)
//   7. the same Schedule simulated with the scenario's own cost model, without
//      the calibration (DIR/uncalibrated/trace.pb), and validated against the
//      same measurement (DIR/uncalibrated/validation.json): what the model
//      gets right before it has seen the machine.
// With real_ranks (--real-ranks LIST), a hybrid emulation: step 2 benchmarks
// as many ranks as run for real, step 4's trace keeps the events of those
// ranks and of every rank they meet (past kMaxDefaultTracedOps ops; below,
// every rank's, so that the hybrid trace compares with an all-real one), step 5 runs only those ranks (eppsim-run
// --ranks LIST --virtual DIR/simulated/trace.pb: the others are timed by the
// calibrated simulation; with closed_loop, re-timed from the real ranks'
// progress: --closed-loop) and step 7 is left out (its model would meet the
// calibrated one's virtual ranks).
// The ranks start through `launcher` (default: mpirun on this machine, one
// rank per core where it has the cores); a cluster's launcher (srun, mpirun
// with a hostfile) is a template whose {ranks} is the number of processes.
// Benchmarks and runs are child processes (the runtime's programs live beside
// `eppsim` or on PATH); a step that fails stops the loop with its command line
// and how it ended. Everything is written to a staging directory that replaces
// DIR only when the loop has finished (sim/output_directory.h).
//
// Steps 1 and 2 take most of a loop's time on a CPU (two minutes of the 2.5 on
// a 2-core machine). With --bench DIR, a loop takes the benchmarks of an
// earlier loop on this machine (DIR/bench/, or DIR itself) instead, copied
// into its own DIR/bench/: they must be of the same backend, the compute (and
// interference) file of the scenario's model and the comm file of at least the
// ranks the scenario needs; anything else is an InputError naming the file and
// field. An earlier loop without interference.json leaves the scenario's
// interference setting to the calibrated simulation.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/bench_drift.h"

namespace eppsim {

struct TestbedRequest {
  std::filesystem::path scenario;
  std::vector<std::string> overrides;  // --set FIELD=VALUE, applied to the scenario
  std::filesystem::path output_dir;
  std::string backend = "cpu";  // "cpu" or "cuda"
  // Where eppsim-run and eppsim-bench are; empty: beside this program (or its
  // build tree's runtime/ folder), else PATH.
  std::filesystem::path runtime_dir;
  // The command that starts N processes, words split at blanks, {ranks} where
  // N goes (e.g. "srun --ntasks={ranks}"); empty: mpirun on this machine.
  std::string launcher;
  std::uint32_t measured_steps = 3;  // eppsim-run keeps the median of these
  std::chrono::seconds step_time_limit{900};  // per child process
  // An earlier loop's output folder (or its bench/ folder) whose benchmarks to
  // use instead of running steps 1 and 2; empty: benchmark.
  std::filesystem::path reuse_bench;
  // The ranks to run for real (a list, "0,3,7-9"); empty: every rank.
  std::string real_ranks;
  // With real_ranks: re-time the virtual ranks from the real ones' progress
  // (eppsim-run --closed-loop); the simulated trace then keeps every rank's events.
  bool closed_loop = false;
};

struct TestbedResult {
  double simulated_step_s = 0.0;
  double measured_step_s = 0.0;
  double step_time_error = 0.0;  // (simulated - measured) / measured
  // The same Schedule simulated without the calibration (step 7; 0 in a hybrid emulation).
  double uncalibrated_step_s = 0.0;
  double uncalibrated_step_time_error = 0.0;
  std::vector<std::uint32_t> real_ranks;  // a hybrid emulation's; empty: every rank ran
  std::uint32_t ranks = 0;                // the Schedule's
  ComputeDrift compute_drift;             // the benchmark's largest rows, after the run against before
};

// The words of `launcher` (split at blanks) with every {ranks} replaced by
// `ranks`; an InputError naming --launcher when none holds {ranks}.
std::vector<std::string> launcher_command(std::string_view launcher, std::uint32_t ranks);

TestbedResult run_testbed(const TestbedRequest& request);

}  // namespace eppsim
