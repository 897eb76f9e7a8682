#include "sim/testbed.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/util/message_differencer.h>

#include "base/errors.h"
#include "base/index_list.h"
#include "base/log.h"
#include "sim/bench_drift.h"
#include "sim/calibrate.h"
#include "sim/output_directory.h"
#include "sim/run.h"
#include "base/subprocess.h"
#include "sim/validate.h"
#include "schedule/program_ops.h"
#include "schedule/ranks_met.h"
#include "schedule/trace_file.h"
#include "scenario/field_locator.h"
#include "schedule/model_shape.h"
#include "base/proto_io.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace fs = std::filesystem;
namespace {

// Message sizes the communication benchmark measures: 4 KiB to 64 MiB by
// factors of 4, which spans a small model's point-to-point activations up to
// its gradient all-reduce.
constexpr const char* kCommBytes = "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,16MiB,64MiB";

fs::path this_program_dir() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : self.parent_path();
}

// `name` beside this program, in its build tree's runtime/ folder, or (found by
// the launcher) on PATH.
std::string runtime_program(const TestbedRequest& request, const std::string& name) {
  std::vector<fs::path> candidates;
  if (!request.runtime_dir.empty()) {
    candidates.push_back(request.runtime_dir / name);
  } else {
    const fs::path here = this_program_dir();
    if (!here.empty()) {
      candidates.push_back(here / name);
      candidates.push_back(here.parent_path() / "runtime" / name);
    }
  }
  for (const auto& c : candidates) {
    if (access(c.c_str(), X_OK) == 0) return c.string();
  }
  if (!request.runtime_dir.empty())
    throw InputError(fmt::format("testbed: --runtime-dir: no executable {} in {}", name, request.runtime_dir.string()));
  return name;  // PATH
}

bool running_as_root() { return geteuid() == 0; }

// The request's launcher for `ranks` processes; by default mpirun with one
// rank per core where the machine has the cores (more ranks than cores would
// measure the OS scheduler, not the schedule).
std::vector<std::string> mpirun_prefix(const TestbedRequest& request, std::uint32_t ranks) {
  if (!request.launcher.empty()) return launcher_command(request.launcher, ranks);
  std::vector<std::string> argv = {"mpirun", "-np", std::to_string(ranks)};
  if (running_as_root()) argv.push_back("--allow-run-as-root");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (ranks > cores) {
    argv.insert(argv.end(), {"--oversubscribe", "--bind-to", "none"});
    logging::warn("testbed", "{} ranks on {} cores: measured times include the OS scheduler's sharing", ranks, cores);
  } else {
    argv.insert(argv.end(), {"--bind-to", "core"});
  }
  return argv;
}

void run_step(const TestbedRequest& request, const std::string& what, std::vector<std::string> argv) {
  logging::info("testbed", "{}: {}", what, command_line(argv));
  ProcessRequest process{std::move(argv),
                         {{"OPENBLAS_NUM_THREADS", "1"}, {"OMP_NUM_THREADS", "1"}},
                         request.step_time_limit};
  const auto result = run_process(process);
  if (!result.succeeded())
    throw std::runtime_error(fmt::format("testbed: {} failed ({}): {}", what, result.describe(),
                                         command_line(process.argv)));
}

// --bench: the earlier loop's benchmark `name` (compute.json, comm.json or
// interference.json), checked to fit this loop (testbed.h); where it has none,
// an empty path if `optional`, else an InputError.
fs::path reusable_benchmark(const TestbedRequest& request, const ResolvedScenario& scenario, std::uint32_t comm_ranks,
                            const std::string& name, bool optional = false) {
  const fs::path folder =
      fs::exists(request.reuse_bench / "bench" / name) ? request.reuse_bench / "bench" : request.reuse_bench;
  const fs::path from = folder / name;
  if (!fs::exists(from)) {
    if (optional) return {};
    throw InputError(fmt::format("testbed: --bench: {} has no {} (nor has {}): name an earlier testbed run's output "
                                 "folder or its bench/ folder",
                                 request.reuse_bench.string(), name, (request.reuse_bench / "bench").string()));
  }
  const proto::BenchFile bench = read_bench_file(from);
  const std::string file = from.string();
  const std::string kind = name.substr(0, name.find('.'));  // compute, comm or interference
  if (bench.kind() != kind) {
    throw InputError(fmt::format("{}: kind: must be {} for --bench, got {}", file, kind, quote_string(bench.kind())));
  }
  if (bench.backend() != request.backend) {
    throw InputError(fmt::format("{}: backend: is {}, but this loop runs --backend {}", file,
                                 quote_string(bench.backend()), request.backend));
  }
  if (kind != "comm" && !google::protobuf::util::MessageDifferencer::Equals(bench.model(),
                                                                              to_model_shape(scenario.model))) {
    throw InputError(fmt::format("{}: model: differs from {}'s model: the {} benchmark must be of the "
                                 "scenario's model",
                                 file, request.scenario.string(), kind));
  }
  if (kind == "comm" && bench.ranks() < comm_ranks) {
    throw InputError(fmt::format("{}: ranks: the benchmark ran on {} ranks; {} needs {}", file, bench.ranks(),
                                 request.scenario.string(), comm_ranks));
  }
  return from;
}

// `from` copied to `to` (the loop's own bench/ folder), unless it is that file.
void copy_benchmark(const fs::path& from, const fs::path& to) {
  if (fs::exists(to) && fs::equivalent(from, to)) return;
  write_file_atomically(to, read_file(from));
  logging::info("testbed", "reusing {}", from.string());
}

// The request's scenario (with its --set overrides) whose cost model `change`
// has changed, resolved; errors name the scenario file's lines.
ResolvedScenario scenario_with_cost_model(const TestbedRequest& request,
                                          const std::function<void(proto::CostModel&)>& change) {
  ParsedScenario parsed = parse_scenario_file(request.scenario, request.overrides);
  change(*parsed.proto.mutable_cost_model());
  return resolve_full(parsed);
}

}  // namespace

std::vector<std::string> launcher_command(std::string_view launcher, std::uint32_t ranks) {
  static constexpr std::string_view kRanks = "{ranks}";
  std::vector<std::string> argv;
  bool has_ranks = false;
  std::istringstream words{std::string(launcher)};
  for (std::string word; words >> word;) {
    for (auto at = word.find(kRanks); at != std::string::npos; at = word.find(kRanks, at)) {
      word.replace(at, kRanks.size(), std::to_string(ranks));
      has_ranks = true;
    }
    argv.push_back(std::move(word));
  }
  if (!has_ranks) {
    throw InputError(fmt::format("testbed: --launcher: must say where the number of processes goes with {{ranks}}, "
                                 "e.g. \"srun --ntasks={{ranks}}\" or \"mpirun -np {{ranks}} --hostfile HOSTS\"; "
                                 "got \"{}\"",
                                 launcher));
  }
  return argv;
}

TestbedResult run_testbed(const TestbedRequest& request) {
  if (request.backend != "cpu" && request.backend != "cuda")
    throw InputError(fmt::format("testbed: --backend: must be cpu or cuda, got '{}'", request.backend));
  if (!request.launcher.empty()) launcher_command(request.launcher, 1);  // a bad template fails before anything runs
  // Resolved once up front so that a bad scenario fails before any benchmark runs.
  const auto scenario = load_scenario(request.scenario, request.overrides);
  if (!scenario.simulation.faults.empty()) {
    // The measured run has no such faults: the comparison would measure the faults, not the simulator.
    scenario.where().fail("faults", "simulated faults have no hardware counterpart in a testbed run; remove them");
  }
  const std::vector<std::uint32_t> real_ranks =
      request.real_ranks.empty()
          ? std::vector<std::uint32_t>{}
          : parse_index_list(request.real_ranks, scenario.usable_gpus(), "testbed: --real-ranks", "rank");
  const bool hybrid = !real_ranks.empty();
  if (request.closed_loop && !hybrid) throw InputError("testbed: --closed-loop: only with --real-ranks");
  // The communication benchmark's ranks: the run's (a hybrid run's real ones),
  // at least 2 on MPI; NCCL also benchmarks one rank, a GPU's own collectives.
  const std::uint32_t comm_ranks = std::max(hybrid ? static_cast<std::uint32_t>(real_ranks.size()) : scenario.usable_gpus(),
                                            hybrid && request.backend == "cuda" ? 1u : 2u);
  // Compute beside communication is measured where the run has two ranks or
  // more (eppsim-bench interference, over the run's ranks), and then priced by
  // its fits in the calibrated simulation.
  const std::uint32_t run_ranks = hybrid ? static_cast<std::uint32_t>(real_ranks.size()) : scenario.usable_gpus();
  const bool interference = run_ranks >= 2;
  // --bench: the files checked before anything is written; an earlier loop
  // without an interference benchmark leaves the scenario's interference as it is.
  fs::path compute_from, comm_from, interference_from;
  if (!request.reuse_bench.empty()) {
    compute_from = reusable_benchmark(request, scenario, comm_ranks, "compute.json");
    comm_from = reusable_benchmark(request, scenario, comm_ranks, "comm.json");
    if (interference) interference_from = reusable_benchmark(request, scenario, comm_ranks, "interference.json", true);
  }
  // Everything goes to a staging directory that replaces DIR only when the
  // loop has finished (sim/output_directory.h): a failed or interrupted loop
  // leaves DIR as it was.
  OutputDirectory output(request.output_dir);
  const fs::path dir = output.staging();
  fs::create_directories(dir / "bench");
  const fs::path compute_bench = dir / "bench" / "compute.json";
  const fs::path comm_bench = dir / "bench" / "comm.json";
  const fs::path interference_bench = dir / "bench" / "interference.json";
  std::vector<fs::path> bench_files = {compute_bench, comm_bench};
  if (!request.reuse_bench.empty()) {
    copy_benchmark(compute_from, compute_bench);
    copy_benchmark(comm_from, comm_bench);
    if (!interference_from.empty()) {
      copy_benchmark(interference_from, interference_bench);
      bench_files.push_back(interference_bench);
    } else if (interference) {
      logging::info("testbed",
                    "{} has no interference.json: the calibrated simulation keeps the scenario's interference",
                    request.reuse_bench.string());
    }
  } else {
    run_step(request, "benchmarking compute",
             {runtime_program(request, "eppsim-bench"), "compute", "--scenario", request.scenario.string(),
              "--backend", request.backend, "--out", compute_bench.string()});
    auto comm = mpirun_prefix(request, comm_ranks);
    comm.insert(comm.end(), {runtime_program(request, "eppsim-bench"), "comm", "--backend", request.backend,
                             "--bytes", kCommBytes, "--out", comm_bench.string()});
    run_step(request, "benchmarking communication", comm);
    if (interference) {
      auto beside = mpirun_prefix(request, run_ranks);
      beside.insert(beside.end(), {runtime_program(request, "eppsim-bench"), "interference", "--scenario",
                                   request.scenario.string(), "--backend", request.backend, "--repeats", "3", "--out",
                                   interference_bench.string()});
      run_step(request, "benchmarking compute beside communication", beside);
      bench_files.push_back(interference_bench);
    }
  }

  const fs::path calibration_file = fs::absolute(dir / "calibration.textproto");
  const proto::Calibration calibration = calibrate_files(bench_files);
  write_message(calibration, calibration_file);
  logging::info("testbed", "wrote {}", calibration_file.string());

  // Compute priced by the calibration's fits whatever the scenario's own model
  // is (a GPU scenario says SHAPED: its uncalibrated model).
  // Likewise compute and communication beside each other, where the machine's
  // were measured: by the calibration's factors, not the scenario's.
  const auto calibrated = scenario_with_cost_model(request, [&](proto::CostModel& cost) {
    cost.clear_calibration();
    cost.set_calibration_file(calibration_file.string());
    cost.set_compute(proto::CostModel::CALIBRATED);
    if (!calibration.interference().empty()) {
      cost.clear_interference();
      cost.mutable_interference()->set_enabled(true);
    }
  });
  // A hybrid emulation's virtual ranks are timed by this simulation's events:
  // those of the real ranks and of every rank they meet, where a run would not
  // keep every rank's anyway.
  PlannedBatch planned = plan_scenario(calibrated);
  TraceRanks trace_ranks;
  if (hybrid && !request.closed_loop && op_count(planned.schedule) > kMaxDefaultTracedOps) {
    trace_ranks = {TraceRanks::Mode::Listed,
                   format_index_list(ranks_and_those_they_meet(planned.schedule, real_ranks))};
  }
  const std::vector<std::uint64_t> lengths = planned.lengths;
  RunResult simulated =
      simulate_schedule(std::move(planned.schedule), calibrated, planned.plan_time_s, {}, TraceDetail{true, trace_ranks});
  simulated.lengths = lengths;
  // The scenario written beside the simulation names the calibration where it will lie.
  simulated.scenario.mutable_cost_model()->set_calibration_file(
      (fs::absolute(request.output_dir) / calibration_file.filename()).string());
  write_run_directory(simulated, dir / "simulated",
                      RunOutputs{.trace = true, .chrome = true, .csv = true, .schedule = true, .trace_ranks = trace_ranks});

  const fs::path measured = dir / "measured" / "trace.pb";
  fs::create_directories(measured.parent_path());
  auto run = mpirun_prefix(request, hybrid ? static_cast<std::uint32_t>(real_ranks.size()) : simulated.schedule.num_ranks());
  run.insert(run.end(), {runtime_program(request, "eppsim-run"), (dir / "simulated" / "schedule.pb").string(),
                         "--backend", request.backend, "--steps", std::to_string(request.measured_steps), "-o",
                         measured.string()});
  if (hybrid) {
    run.insert(run.end(), {"--ranks", format_index_list(real_ranks), "--virtual", (dir / "simulated" / "trace.pb").string()});
    if (request.closed_loop) run.push_back("--closed-loop");
  }
  run_step(request, hybrid ? "executing the real ranks of the schedule" : "executing the schedule", run);

  // Step 5b: the benchmark's largest rows timed again, now (sim/bench_drift.h).
  const proto::BenchFile compute_before = read_bench_file(compute_bench);
  const fs::path compute_after = dir / "bench" / "compute-after.json";
  run_step(request, "timing compute again",
           {runtime_program(request, "eppsim-bench"), "compute", "--scenario", request.scenario.string(), "--backend",
            request.backend, "--tokens",
            std::to_string(largest_plain_layer_tokens(compute_before, compute_bench.string())), "--context", "0",
            "--repeats", "3", "--out", compute_after.string()});
  const ComputeDrift drift = compute_drift(compute_before, read_bench_file(compute_after), compute_bench.string(),
                                           compute_after.string());
  write_file_atomically(dir / "bench" / "drift.json", compute_drift_json(drift));

  // Validated under the names the files will have once DIR replaces the staging folder.
  const proto::Trace measured_trace = read_trace(measured);
  const auto validate_against_measured = [&](const fs::path& simulated_trace) {
    return validate_traces(read_trace(dir / simulated_trace), measured_trace,
                           (request.output_dir / simulated_trace).string(),
                           (request.output_dir / "measured" / "trace.pb").string());
  };
  const auto result = validate_against_measured(fs::path("simulated") / "trace.pb");
  write_validation(result, dir);
  const auto& v = result.validation;
  TestbedResult outcome{v.simulated_step_time_s(), v.measured_step_time_s(), v.step_time_error(), 0.0, 0.0, real_ranks,
                        simulated.schedule.num_ranks(), drift};
  if (hybrid) {
    output.commit();
    return outcome;
  }

  // Step 7: the Schedule that ran, priced by the scenario's own cost model.
  const auto uncalibrated_scenario = scenario_with_cost_model(request, [](proto::CostModel& cost) {
    cost.clear_calibration();
    cost.clear_calibration_file();
    if (cost.compute() == proto::CostModel::CALIBRATED) cost.clear_compute();
  });
  const RunResult uncalibrated = simulate_schedule(simulated.schedule, uncalibrated_scenario, 0.0);
  write_run_directory(uncalibrated, dir / "uncalibrated",
                      RunOutputs{.trace = true, .chrome = false, .csv = false, .schedule = false});
  const auto uncalibrated_result = validate_against_measured(fs::path("uncalibrated") / "trace.pb");
  write_validation(uncalibrated_result, dir / "uncalibrated");

  output.commit();
  outcome.uncalibrated_step_s = uncalibrated_result.validation.simulated_step_time_s();
  outcome.uncalibrated_step_time_error = uncalibrated_result.validation.step_time_error();
  return outcome;
}

}  // namespace eppsim
