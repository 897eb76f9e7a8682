#pragma once
// eppsim-bench comm: communication microbenchmarks in the manner of
// nccl-tests, one process per rank under MPI:
//   mpirun -np N eppsim-bench comm --backend cpu|cuda --out BENCH.json
//          [--ops send-recv,all-reduce,all-gather,reduce-scatter,all-to-all]
//          [--bytes 1KiB,...,64MiB (default: powers of 2)] [--iterations 20] [--warmup 5]
// For each op, each group size 2, 4, ... up to N (the first g ranks; send-recv:
// ranks 0 and 1; with --backend cuda and N = 1, one group of one rank, without
// send-recv) and each size, times `iterations` back-to-back calls after a
// warm-up and a barrier; time_s is the slowest rank's mean per call. `bytes`
// is schedule.proto's size_bytes for the op (the per-rank buffer; send-recv:
// the message). algbw and busbw as nccl-tests define them: algbw = S / time
// with S nccl-tests' size (all-gather: the gathered output, group size x
// bytes; the others: bytes), busbw = algbw x 2(n-1)/n for all-reduce, (n-1)/n
// for all-gather, reduce-scatter and all-to-all, 1 for send-recv. Every result
// is checked (the receivers hold what the senders sent, the sums are right):
// `correct`. Rank 0 writes BENCH.json (the format in the runtime README).
// cpu: MPI on host buffers, timed with steady_clock; cuda (builds with CUDA
// and NCCL, runtime/cuda/nccl_bench.h): NCCL on device buffers, timed with
// CUDA events. Buffers and checks: runtime/comm_bench_data.h.
namespace eppsim::runtime {

// main() of `eppsim-bench comm` (argv[0] is "comm"); initialises and
// finalises MPI; returns the exit status (0, 2 bad input, 1 other failure).
int run_comm_bench(int argc, char** argv);

}  // namespace eppsim::runtime
