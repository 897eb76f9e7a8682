#pragma once
// `eppsim sweep SWEEP -o DIR [-j N] [--outputs LIST] [--point N]`, as main()
// hands it over: a worker runs its one point (sweep_point.h); otherwise the
// whole sweep runs here (sweep_runner.h), or, under mpirun, in
// eppsim-sweep-mpi (sweep_ranks.h), which this process becomes.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "sim/sweep/sweep_runner.h"

namespace eppsim {

struct SweepCommand {
  std::filesystem::path sweep;
  SweepOptions options;                // its `eppsim` is filled in: this program
  std::optional<std::uint32_t> point;  // --point
  std::string log;                     // --log, passed on to eppsim-sweep-mpi
};

// Prints the summary on stdout. InputError for a bad sweep or --outputs list,
// before any point runs.
void run_sweep_command(SweepCommand command);

}  // namespace eppsim
