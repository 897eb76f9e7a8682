// eppsim-run with the compute side replaced by a test double
// (sleep_compute_queue.h) and the real MPI communication: the end-to-end
// tests of the rank executor, the MPI engine, trace merging and faults run it
// under mpirun without the kernels of runtime/cpu/.
#include <memory>

#include <fmt/format.h>

#include "base/errors.h"
#include "runtime/mpi/mpi_comm_engine.h"
#include "runtime/mpi/run_command.h"
#include "tests/runtime/sleep_compute_queue.h"

int main(int argc, char** argv) {
  using namespace eppsim::runtime;
  return run_eppsim_run(argc, argv, [](const BackendRequest& request, const eppsim::proto::Schedule& schedule,
                                       const MpiGroups& groups, const StepClock& clock) {
    if (request.name != "cpu") {
      throw eppsim::InputError(fmt::format("--backend: the test driver runs only cpu, got '{}'", request.name));
    }
    Backend backend;
    backend.compute = std::make_unique<testing::SleepComputeQueue>(clock);
    backend.comm = std::make_unique<MpiCommEngine>(schedule, groups, clock);
    return backend;
  });
}
