#pragma once
// `eppsim-bench compute`: times one transformer layer of the scenario's model
// (LAYER_WHOLE, one rank, through plan_kernels, so what is timed is what
// eppsim-run executes) on a backend's ComputeQueue, for each pass (forward,
// backward) and each (tokens s, context c) of a grid, packed layers of n
// sequences of s tokens each, and each of the layer's GEMMs, the LM head's
// GEMMs and the layer's attention alone. Writes BENCH.json (the format of
// runtime-contracts: "kernel" rows "layer", "gemm" and "attention"), which
// `eppsim calibrate` fits.
//
//   eppsim-bench compute --scenario FILE --backend cpu|cuda --out BENCH.json
//                        [--tokens LIST] [--context LIST] [--packed LIST] [--repeats N] [--warmup N]
//   --tokens   default: powers of two from 64 up to workload.max_length
//   --context  context tokens, the same for every s; default: {0, s, 2s} per s
//   --packed   sequence lengths s of the packed rows: n = 2, 4, ... 32 sequences
//              of s tokens while n*s <= workload.max_length, no context; default
//              on cuda without --tokens: 64 and 256 where 2s <= max_length (a
//              sequence's attention is launches of its own, which calibrate's
//              gamma prices); none on cpu, where launches cost nothing
//   --repeats  timed rounds (default 5); a row's time_s is the median of its runs
//   --warmup   untimed rounds before them (default 1, at least 1)
//   --max-memory  the memory guard's limit (base/memory_limit.h): a grid whose
//              kernel buffers would pass it is refused before any is allocated
//   --attention  cuda: flash (cuDNN's flash attention; the default where the
//              build has cuDNN) or reference (the backend's own kernel)
// Every row's kernels are queued back to back in rounds, a run of each row a
// round (time_plans), each timed from the end of the run before it, so a time
// includes the queue's own per-op cost, as in a run.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <google/protobuf/struct.pb.h>

#include "runtime/compute_queue.h"
#include "runtime/step_clock.h"
#include "proto/schedule.pb.h"

namespace eppsim::runtime {

struct ComputeBenchOptions {
  std::filesystem::path scenario;
  std::string backend;  // "cpu" or "cuda"
  std::string attention;  // cuda: "flash" or "reference"; empty: the build's default
  std::string max_memory;  // e.g. "16GiB"; empty: the default limit
  std::filesystem::path out;
  std::vector<std::uint64_t> tokens;
  std::vector<std::uint64_t> contexts;
  std::vector<std::uint64_t> packed;
  std::uint32_t repeats = 5;
  std::uint32_t warmup = 1;
};

// `argv` holds the arguments after "compute". Throws InputError naming the
// option and the rule.
ComputeBenchOptions parse_compute_bench_args(int argc, char** argv);

// The grid of (s, c) pairs: options.tokens (default: 64, 128, ... up to
// max_length, and max_length itself when it is no power of two) times
// options.contexts (default {0, s, 2s}); then the packed points (--packed,
// whose default depends on options.backend).
struct GridPoint {
  std::uint64_t tokens = 0, context_tokens = 0;
  std::uint32_t segments = 1;  // sequences of `tokens` (and `context_tokens`) each
};
std::vector<GridPoint> compute_bench_grid(const ComputeBenchOptions& options, std::uint64_t max_length);

// Durations of each of `plans` over `repeats` rounds after `warmup` rounds
// (warmup >= 1). A round runs every plan once, in order, back to back on the
// queue; a run lasts from the end of the run before it to its own end (the
// queue's completion times). Interleaved so, each plan's runs are spread over
// the whole measurement, and a machine that slows for a while (a shared VM)
// slows every plan alike rather than the few measured then. The calling
// thread waits in ComputeQueue::wait(wait_s) between polls (negative: until a
// run ends).
std::vector<std::vector<double>> time_plans(ComputeQueue& queue, std::span<const KernelPlan> plans,
                                            std::uint32_t warmup, std::uint32_t repeats, double wait_s = -1.0);
// time_plans of one plan: `repeats` back-to-back runs after `warmup` runs.
std::vector<double> time_plan(ComputeQueue& queue, const KernelPlan& plan, std::uint32_t warmup,
                              std::uint32_t repeats, double wait_s = -1.0);

// The BENCH.json document for `model` over `grid` on `queue`.
google::protobuf::Struct measure_compute(const proto::ModelShape& model, const std::vector<GridPoint>& grid,
                                         ComputeQueue& queue, const std::string& backend, const std::string& device,
                                         std::uint32_t warmup, std::uint32_t repeats);

// The ComputeQueue of `backend` ("cpu": one OpenBLAS thread; "cuda": device 0
// of the CUDA backend, with `attention` as --attention names it) on `clock`;
// sets `device` to its name and `attention` to the kernel's name (cuda) or
// clears it (cpu). Throws InputError for cuda in builds without the CUDA
// backend, or an attention kernel the build lacks.
std::unique_ptr<ComputeQueue> make_bench_compute_queue(const std::string& backend, const StepClock& clock,
                                                       std::string& device, std::string& attention);

// "AMD EPYC 7B13 (1 thread)": /proc/cpuinfo's model name and the BLAS threads.
std::string cpu_device_name(int threads);

// The subcommand (argv: the arguments after "compute"): parse, load the scenario, measure, write --out. Returns 0;
// throws InputError for bad arguments or scenarios, other exceptions otherwise.
int run_compute_bench(int argc, char** argv);

}  // namespace eppsim::runtime
