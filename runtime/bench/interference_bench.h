#pragma once
// `eppsim-bench interference`: compute slowed by communication running beside
// it, and communication slowed by compute beside it (issue 11 item 4; the
// factors of issue 12's interference model), one process per rank under MPI:
//   mpirun -np N eppsim-bench interference --scenario FILE --backend cpu --out BENCH.json
//          [--ops LIST (all five of eppsim-bench comm)] [--bytes LIST (64KiB,1MiB,16MiB)]
//          [--tokens S (workload.max_length)] [--repeats N (5)] [--warmup N (1)] [--iterations N (20)]
// The compute is one transformer layer's forward of S new tokens of the
// scenario's model (plan_kernels, on the backend's ComputeQueue, as eppsim-run
// runs it); the communication is one op of `bytes` over all ranks (send-recv:
// rank 0 to rank 1), checked as eppsim-bench comm checks it. Per (op, bytes):
//   compute alone    the layer back to back on the queue (compute_bench's time_plan),
//                    the loop waking every 500 us as beside the communication, so
//                    that only the communication differs (on a busy machine a
//                    thread that wakes often gets more of the core than one that blocks)
//   comm alone       blocking calls back to back, as eppsim-bench comm times them
//   beside           a window of K iterations of the op, each started when the
//                    previous one is seen complete, polled as runtime/rank_executor
//                    polls beside compute (MPI_Test*, then the compute queue, then
//                    ComputeQueue::wait of RankExecutorOptions' 500 us), while the
//                    queue runs the layer back to back for as long as the
//                    communication lasts. The ranks must agree on K (every rank
//                    makes the same collective calls), so K is fixed per point
//                    (about twice the layer's time by the comm's time alone,
//                    doubled until each window holds a whole layer), and the
//                    compute, which is local, fills the window instead.
//                    compute beside: the layers that ended inside the window;
//                    comm beside: the window's length / K.
// Every time is the median over `repeats` (after `warmup` untimed runs), the
// slowest rank's; compute_slowdown = compute_beside_s / compute_alone_s,
// comm_slowdown = comm_beside_s / comm_alone_s. Rank 0 writes BENCH.json: kind
// "interference" (traces/proto/bench.proto), read by `eppsim calibrate`.
// Only the cpu backend (MPI) is measured so far: --backend cuda is bad input.
namespace eppsim::runtime {

// main() of `eppsim-bench interference` (argv[0] is "interference");
// initialises and finalises MPI; returns the exit status (0, 2 bad input, 1
// other failure, including a wrong result).
int run_interference_bench(int argc, char** argv);

}  // namespace eppsim::runtime
