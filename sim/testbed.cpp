#include "sim/testbed.h"

#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "models/errors.h"
#include "models/log.h"
#include "sim/calibrate.h"
#include "sim/run.h"
#include "sim/subprocess.h"
#include "sim/validate.h"
#include "traces/proto_io.h"
#include "traces/scenario.h"

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

// mpirun with one rank per core where the machine has the cores (more ranks
// than cores would measure the OS scheduler, not the schedule).
std::vector<std::string> mpirun_prefix(const TestbedRequest& request, std::uint32_t ranks) {
  std::vector<std::string> argv = {request.mpirun, "-np", std::to_string(ranks)};
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

}  // namespace

TestbedResult run_testbed(const TestbedRequest& request) {
  if (request.backend != "cpu" && request.backend != "cuda")
    throw InputError(fmt::format("testbed: --backend: must be cpu or cuda, got '{}'", request.backend));
  // Resolved once up front so that a bad scenario fails before any benchmark runs.
  const auto scenario = load_scenario(request.scenario);
  if (!scenario.faults.empty()) {
    // The measured run has no such faults: the comparison would measure the faults, not the simulator.
    scenario.where().fail("faults", "simulated faults have no hardware counterpart in a testbed run; remove them");
  }
  const std::uint32_t ranks = scenario.usable_gpus();
  const fs::path dir = request.output_dir;
  fs::create_directories(dir / "bench");

  const fs::path compute_bench = dir / "bench" / "compute.json";
  const fs::path comm_bench = dir / "bench" / "comm.json";
  run_step(request, "benchmarking compute",
           {runtime_program(request, "eppsim-bench"), "compute", "--scenario", request.scenario.string(), "--backend",
            request.backend, "--out", compute_bench.string()});
  auto comm = mpirun_prefix(request, std::max(ranks, 2u));
  comm.insert(comm.end(), {runtime_program(request, "eppsim-bench"), "comm", "--backend", request.backend, "--bytes",
                           kCommBytes, "--out", comm_bench.string()});
  run_step(request, "benchmarking communication", comm);

  const fs::path calibration_file = fs::absolute(dir / "calibration.textproto");
  const std::vector<fs::path> bench_files = {compute_bench, comm_bench};
  write_message(calibrate_files(bench_files), calibration_file);
  logging::info("testbed", "wrote {}", calibration_file.string());

  const auto calibrated =
      load_scenario(request.scenario, {"cost_model.calibration_file=" + calibration_file.string()});
  const RunResult simulated = run_scenario(calibrated);
  write_run_directory(simulated, dir / "simulated", RunOutputs{.trace = true, .chrome = true, .csv = true, .schedule = true});

  const fs::path measured = dir / "measured" / "trace.pb";
  fs::create_directories(measured.parent_path());
  auto run = mpirun_prefix(request, simulated.schedule.num_ranks());
  run.insert(run.end(), {runtime_program(request, "eppsim-run"), (dir / "simulated" / "schedule.pb").string(),
                         "--backend", request.backend, "--steps", std::to_string(request.measured_steps), "-o",
                         measured.string()});
  run_step(request, "executing the schedule", run);

  const auto result = validate_trace_files(dir / "simulated" / "trace.pb", measured);
  write_validation(result, dir);
  const auto& v = result.validation;
  return TestbedResult{v.simulated_step_time_s(), v.measured_step_time_s(), v.step_time_error()};
}

}  // namespace eppsim
