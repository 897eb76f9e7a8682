// mpirun -np N eppsim-run SCHEDULE --backend cpu|cuda -o TRACE  (runtime/mpi/run_command.h)
// The backends: cpu = OpenBLAS kernels (runtime/cpu/) + MPI; cuda = cuBLAS
// kernels (runtime/cuda/) + NCCL, in builds that have them.
#include <memory>

#include <fmt/format.h>

#include "base/errors.h"
#include "runtime/cpu/cpu_compute_queue.h"
#include "runtime/mpi/mpi_comm_engine.h"
#include "runtime/mpi/run_command.h"
#ifdef EPPSIM_WITH_NCCL
#include "runtime/cuda/cuda_compute.h"
#include "runtime/cuda/nccl_comm.h"
#endif

int main(int argc, char** argv) {
  using namespace eppsim::runtime;
  return run_eppsim_run(argc, argv, [](const BackendRequest& request, const eppsim::proto::Schedule& schedule,
                                       const MpiGroups& groups, const StepClock& clock) {
    Backend backend;
    if (request.name == "cpu") {
      backend.compute = make_cpu_compute_queue(clock, CpuComputeOptions{});
      backend.comm = std::make_unique<MpiCommEngine>(schedule, groups, clock);
      return backend;
    }
#ifdef EPPSIM_WITH_NCCL
    if (request.name == "cuda") {
      CudaComputeOptions options;
      if (!request.attention.empty()) options.attention = parse_cuda_attention(request.attention, "eppsim-run: --attention");
      backend.compute = make_cuda_compute_queue(clock, options);
      backend.comm = std::make_unique<NcclCommEngine>(schedule, groups, clock);
      return backend;
    }
#endif
    throw eppsim::InputError(fmt::format("eppsim-run: --backend: '{}' is not built into this eppsim-run", request.name));
  });
}
