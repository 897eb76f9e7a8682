#include "sim/sweep/sweep_ranks.h"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace eppsim {
namespace {

std::uint32_t environment_number(const char* name, std::uint32_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return static_cast<std::uint32_t>(std::stoul(text));
}

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) throw std::runtime_error(fmt::format("sweep: {} failed (MPI error {})", call, status));
}

}  // namespace

SweepRanks::SweepRanks() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return;
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  mpi_ = true;
  int rank = 0, size = 1;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  share_.rank = static_cast<std::uint32_t>(rank);
  share_.count = static_cast<std::uint32_t>(size);
  share_.on_this_node = environment_number("OMPI_COMM_WORLD_LOCAL_SIZE", 1);
}

SweepRanks::~SweepRanks() {
  if (mpi_) MPI_Finalize();
}

void SweepRanks::wait_for_all() const {
  if (mpi_) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

std::uint64_t SweepRanks::sum(std::uint64_t value) const {
  if (!mpi_) return value;
  unsigned long long in = value, out = 0;
  check(MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

void run_sweep(const SweepPlan& plan, const SweepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const SweepRanks ranks;
  SweepTally tally = run_sweep_share(plan, options, ranks.share());
  tally.resumed = static_cast<std::uint32_t>(ranks.sum(tally.resumed));
  tally.ran = static_cast<std::uint32_t>(ranks.sum(tally.ran));
  ranks.wait_for_all();
  if (ranks.share().rank != 0) return;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << finish_sweep(plan, options, tally, wall, ranks.share().count);
}

}  // namespace eppsim
