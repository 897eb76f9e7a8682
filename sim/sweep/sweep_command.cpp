#include "sim/sweep/sweep_command.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "base/errors.h"
#include "sim/run.h"
#include "sim/sweep/sweep_point.h"

namespace eppsim {
namespace {

// Under mpirun this process replaces itself with eppsim-sweep-mpi, found
// beside eppsim (build tree and installation alike).
[[noreturn]] void become_sweep_mpi(const SweepCommand& command) {
  const SweepOptions& options = command.options;
  const std::filesystem::path program = options.eppsim.parent_path() / "eppsim-sweep-mpi";
  std::vector<std::string> args = {program.string(),   "--eppsim", options.eppsim.string(), command.sweep.string(),
                                   "-o",               options.output.string(), "-j", std::to_string(options.jobs),
                                   "--outputs",        options.outputs};
  if (!command.log.empty()) args.insert(args.end(), {"--log", command.log});
  if (!options.points.empty()) args.insert(args.end(), {"--points", options.points});
  if (options.html) args.emplace_back("--html");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(program.c_str(), argv.data());
  throw std::runtime_error(
      fmt::format("eppsim sweep under mpirun: cannot run {}: {}", program.string(), std::strerror(errno)));
}

// A sweep writes into DIR and resumes from what it holds, so DIR must be
// absent, empty, or a sweep's earlier output.
void check_output_directory(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::symlink_status(dir, error);
  if (!fs::exists(status)) return;
  if (fs::is_symlink(status))
    throw InputError(fmt::format("{}: is a symbolic link, which eppsim sweep does not write into", dir.string()));
  if (!fs::is_directory(status)) throw InputError(fmt::format("{}: exists and is not a directory", dir.string()));
  if (fs::equivalent(dir, fs::current_path(), error))
    throw InputError(fmt::format("{}: is the current directory; give eppsim sweep a folder of its own", dir.string()));
  const bool empty = fs::is_empty(dir, error);
  const bool earlier_sweep = fs::is_directory(dir / "points", error) || fs::is_regular_file(dir / "results.csv", error);
  if (!empty && !earlier_sweep) {
    throw InputError(fmt::format("{}: holds files eppsim sweep did not write (no points/ or results.csv); give it "
                                 "an empty or new folder",
                                 dir.string()));
  }
}

}  // namespace

void run_sweep_command(SweepCommand command) {
  command.options.eppsim = std::filesystem::read_symlink("/proc/self/exe");
  parse_run_outputs(command.options.outputs);  // a bad list fails before any point runs
  SweepPlan plan = read_sweep(command.sweep);
  check_output_directory(command.options.output);
  if (command.point) {
    run_sweep_point(plan, *command.point, command.options);
    return;
  }
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) become_sweep_mpi(command);
  if (!command.options.points.empty()) select_points(&plan, command.options.points);
  const auto start = std::chrono::steady_clock::now();
  const SweepTally tally = run_sweep_share(plan, command.options, SweepShare{});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << finish_sweep(plan, command.options, tally, wall, 1);
}

}  // namespace eppsim
