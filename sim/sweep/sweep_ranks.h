#pragma once
// A sweep's processes under `mpirun -np N eppsim sweep ...`, in
// eppsim-sweep-mpi (sweep_mpi_main.cpp), which each of them becomes: Open
// MPI's process ranks split the points (sweep_runner.h), and a barrier tells
// rank 0 when every share is done, so that it writes the results. eppsim
// itself links SimGrid, whose SMPI exports MPI_Init and the rest, so Open MPI
// lives in this program of its own. Outside mpirun (no OMPI_COMM_WORLD_SIZE
// in the environment) MPI is not initialised and the one process takes every
// point.
#include <cstdint>

#include "sim/sweep/sweep_runner.h"

namespace eppsim {

class SweepRanks {
 public:
  // Initialises MPI when launched by mpirun (std::runtime_error when that fails).
  SweepRanks();
  ~SweepRanks();  // finalises MPI when it was initialised
  SweepRanks(const SweepRanks&) = delete;
  SweepRanks& operator=(const SweepRanks&) = delete;

  const SweepShare& share() const { return share_; }
  // Waits until every process has called it (returns at once outside mpirun).
  void wait_for_all() const;
  // The sum over the processes of `value` (itself outside mpirun).
  std::uint64_t sum(std::uint64_t value) const;

 private:
  SweepShare share_;
  bool mpi_ = false;
};

// The whole sweep from this process: its share of the points (all of them
// outside mpirun); then, once every process is done, rank 0 writes the
// results (write_sweep_results) and prints a summary on stdout.
void run_sweep(const SweepPlan& plan, const SweepOptions& options);

}  // namespace eppsim
