#pragma once
// `eppsim-bench interference`: compute slowed by communication running beside
// it, and communication slowed by compute beside it (issue 11 item 4; the
// factors of issue 12's interference model), one process per rank under MPI:
//   mpirun -np N eppsim-bench interference --scenario FILE --backend cpu|cuda --out BENCH.json
//          [--ops LIST (all five of eppsim-bench comm)] [--bytes LIST (64KiB,1MiB,16MiB)]
//          [--tokens S (workload.max_length)] [--repeats N (5)] [--warmup N (1)] [--iterations N (20)]
// The compute is one transformer layer's forward of S new tokens of the
// scenario's model (plan_kernels, on the backend's ComputeQueue, as eppsim-run
// runs it: cpu OpenBLAS, cuda cuBLAS on this rank's GPU); the communication is
// one op of `bytes` over all ranks (send-recv: rank 0 to rank 1; cpu MPI, cuda
// NCCL on its own communicator and stream), checked as eppsim-bench comm checks
// it. Per (op, bytes):
//   compute alone    the layer back to back on the queue (compute_bench's time_plan),
//                    the loop waking every 500 us as beside the communication, so
//                    that only the communication differs (on a busy machine a
//                    thread that wakes often gets more of the core than one that blocks)
//   comm alone       calls back to back, as eppsim-bench comm times them
//                    (cpu: blocking MPI calls; cuda: NCCL calls between CUDA events)
//   beside           a window of K calls of the op (runtime/comm_window.h:
//                    cpu, each started when the previous one is seen complete,
//                    polled as runtime/rank_executor polls beside compute; cuda,
//                    all enqueued at once on the comm stream, timed with CUDA
//                    events), while the queue runs the layer back to back for as
//                    long as the communication lasts, the loop polling the window,
//                    the queue, then ComputeQueue::wait of RankExecutorOptions'
//                    500 us (runtime/bench/interference_point.h). The ranks must
//                    agree on K (every rank makes the same collective calls), so
//                    K is fixed per point (about twice the layer's time by the
//                    comm's time alone, doubled until each window holds a whole
//                    layer), and the compute, which is local, fills the window instead.
//                    compute beside: the layers that ended inside the window;
//                    comm beside: the window's length / K.
// Every time is the median over `repeats` (after `warmup` untimed runs), the
// slowest rank's; compute_slowdown = compute_beside_s / compute_alone_s,
// comm_slowdown = comm_beside_s / comm_alone_s. Rank 0 writes BENCH.json: kind
// "interference" (proto/bench.proto), read by `eppsim calibrate`.
// --backend cuda needs a build with CUDA/NCCL (bad input otherwise) and a GPU
// per rank (an error naming the missing GPU otherwise); it is built, never run.
namespace eppsim::runtime {

// main() of `eppsim-bench interference` (argv[0] is "interference");
// initialises and finalises MPI; returns the exit status (0, 2 bad input, 1
// other failure, including a wrong result).
int run_interference_bench(int argc, char** argv);

}  // namespace eppsim::runtime
