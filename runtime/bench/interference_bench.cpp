#include "runtime/bench/interference_bench.h"

#include <mpi.h>

#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <google/protobuf/struct.pb.h>

#include "base/errors.h"
#include "base/units.h"
#include "runtime/comm_bench_data.h"
#include "runtime/bench/comm_measure.h"
#include "runtime/comm_window.h"
#include "runtime/bench/compute_bench.h"
#include "runtime/bench/interference_point.h"
#include "runtime/kernel_plan.h"
#include "runtime/mpi/mpi_main.h"
#include "runtime/mpi/mpi_wait.h"
#include "runtime/rank_executor.h"
#include "schedule/compute_segments.h"
#include "schedule/model_shape.h"
#include "base/proto_io.h"
#include "scenario/scenario.h"
#ifdef EPPSIM_WITH_NCCL
#include "runtime/cuda/cuda_compute.h"
#include "runtime/cuda/nccl_bench.h"
#endif

namespace po = boost::program_options;

namespace eppsim::runtime {
namespace {

#ifdef EPPSIM_WITH_NCCL
constexpr bool kWithNccl = true;
#else
constexpr bool kWithNccl = false;
#endif

// Bound on every wait (barriers, a window's communication), as eppsim-run's default --timeout.
constexpr double kTimeout_s = 300.0;
// Doublings of K before a window that holds no whole layer is an error.
constexpr int kMaxDoublings = 12;

struct Options {
  std::string scenario, backend, out;
  std::vector<CommKind> ops;
  std::vector<std::uint64_t> bytes;
  std::uint64_t tokens = 0;  // 0: the scenario's max_length
  int repeats = 5, warmup = 1, iterations = 20;
};

std::optional<Options> parse(int argc, char** argv, int rank) {
  Options o;
  std::string ops = "send-recv,all-reduce,all-gather,reduce-scatter,all-to-all", bytes = "64KiB,1MiB,16MiB";
  po::options_description options("mpirun -np N eppsim-bench interference --scenario FILE --backend cpu|cuda --out BENCH.json");
  options.add_options()("help,h", "show this help")                                                          //
      ("scenario", po::value(&o.scenario)->required(), "the scenario whose model computes")                //
      ("backend", po::value(&o.backend)->required(), "cpu (OpenBLAS and MPI) or cuda (cuBLAS and NCCL)")                              //
      ("out", po::value(&o.out)->required(), "the BENCH.json to write")                                     //
      ("ops", po::value(&ops), "comma-separated: send-recv, all-reduce, all-gather, reduce-scatter, all-to-all, broadcast")  //
      ("bytes", po::value(&bytes), "comma-separated sizes (default 64KiB,1MiB,16MiB)")                       //
      ("tokens", po::value(&o.tokens), "new tokens of the layer's forward (default: workload.max_length)")   //
      ("repeats", po::value(&o.repeats)->default_value(5), "timed runs per point; times are medians")        //
      ("warmup", po::value(&o.warmup)->default_value(1), "untimed runs before them")                         //
      ("iterations", po::value(&o.iterations)->default_value(20), "calls per timing of the comm alone");
  po::variables_map vars;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vars);
    if (vars.count("help")) {
      if (rank == 0) std::cout << options << "\n";
      return std::nullopt;
    }
    po::notify(vars);
  } catch (const po::error& e) {
    throw InputError(fmt::format("eppsim-bench interference: {}", e.what()));
  }
  check_bench_backend("eppsim-bench interference", o.backend, kWithNccl);
  o.ops = parse_bench_ops("eppsim-bench interference", ops);
  o.bytes = parse_bench_sizes(bytes);
  if (o.ops.empty() || o.bytes.empty()) throw InputError("eppsim-bench interference: --ops and --bytes: must not be empty");
  if (vars.count("tokens") && o.tokens == 0) throw InputError("eppsim-bench interference: --tokens: must be > 0");
  if (o.repeats < 1) throw InputError(fmt::format("eppsim-bench interference: --repeats: must be >= 1, got {}", o.repeats));
  if (o.warmup < 1) throw InputError(fmt::format("eppsim-bench interference: --warmup: must be >= 1, got {}", o.warmup));
  if (o.iterations < 1)
    throw InputError(fmt::format("eppsim-bench interference: --iterations: must be >= 1, got {}", o.iterations));
  return o;
}

// The cpu backend's window: one non-blocking call at a time, started as
// MpiCommEngine starts it (send-recv: a synchronous send from position 0 to
// position 1), each started when a poll sees the previous one complete.
class MpiWindow final : public CommWindow {
 public:
  MpiWindow(CommKind op, MPI_Comm comm, std::uint64_t bytes, const StepClock& clock) : op_(op), comm_(comm), clock_(clock) {
    check_mpi(MPI_Comm_rank(comm, &me_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &n_), "MPI_Comm_size");
    shape_ = bench_shape(op, bytes, static_cast<std::uint32_t>(n_));
    send_ = bench_send_buffer(shape_, static_cast<std::uint32_t>(me_));
    recv_.assign(shape_.recv_elements, -1.0f);
  }

  double min_call_s() const override { return RankExecutorOptions{}.poll_interval_beside_compute_s; }

  void start(int calls) override {
    calls_ = calls;
    started_ = 0;
    start_s_ = clock_.now_s();
    start_call();
  }

  std::optional<WindowSpan> poll() override {
    int done = 0;
    check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (!done) return std::nullopt;
    requests_.clear();
    if (started_ < calls_) {
      start_call();
      return std::nullopt;
    }
    const double end_s = clock_.now_s();
    return WindowSpan{end_s, end_s - start_s_};
  }

  bool received_correctly() override {
    return bench_received_correctly(op_, shape_, static_cast<std::uint32_t>(me_), static_cast<std::uint32_t>(n_), recv_);
  }

 private:
  void start_call() {
    ++started_;
    const int count = static_cast<int>(shape_.count);
    MPI_Request r = MPI_REQUEST_NULL;
    switch (op_) {
      case CommKind::SendRecv:
        if (me_ == 0) check_mpi(MPI_Issend(send_.data(), count, MPI_FLOAT, 1, 0, comm_, &r), "MPI_Issend");
        if (me_ == 1) check_mpi(MPI_Irecv(recv_.data(), count, MPI_FLOAT, 0, 0, comm_, &r), "MPI_Irecv");
        break;
      case CommKind::AllReduce:
        check_mpi(MPI_Iallreduce(send_.data(), recv_.data(), count, MPI_FLOAT, MPI_SUM, comm_, &r), "MPI_Iallreduce");
        break;
      case CommKind::AllGather:
        check_mpi(MPI_Iallgather(send_.data(), count, MPI_FLOAT, recv_.data(), count, MPI_FLOAT, comm_, &r),
                  "MPI_Iallgather");
        break;
      case CommKind::ReduceScatter:
        check_mpi(MPI_Ireduce_scatter_block(send_.data(), recv_.data(), count, MPI_FLOAT, MPI_SUM, comm_, &r),
                  "MPI_Ireduce_scatter_block");
        break;
      case CommKind::AllToAll:
        check_mpi(MPI_Ialltoall(send_.data(), count, MPI_FLOAT, recv_.data(), count, MPI_FLOAT, comm_, &r),
                  "MPI_Ialltoall");
        break;
      case CommKind::Broadcast:
        check_mpi(MPI_Ibcast(me_ == 0 ? send_.data() : recv_.data(), count, MPI_FLOAT, 0, comm_, &r), "MPI_Ibcast");
        break;
    }
    if (r != MPI_REQUEST_NULL) requests_.push_back(r);
  }

  CommKind op_;
  MPI_Comm comm_;
  const StepClock& clock_;
  int me_ = 0, n_ = 0;
  CommShape shape_;
  std::vector<float> send_, recv_;
  std::vector<MPI_Request> requests_;
  int calls_ = 0, started_ = 0;
  double start_s_ = 0.0;
};

// The window of `backend` for one point on the members of `comm`.
std::unique_ptr<CommWindow> make_window(const std::string& backend, CommKind op, MPI_Comm comm, std::uint64_t bytes,
                                        const StepClock& clock) {
#ifdef EPPSIM_WITH_NCCL
  if (backend == "cuda") return make_nccl_window(op, comm, bytes, clock);
#else
  (void)backend;
#endif
  return std::make_unique<MpiWindow>(op, comm, bytes, clock);
}

// One (op, bytes) point on the members of `comm`: this rank's medians, then the slowest rank's.
InterferencePoint measure_point(const Options& o, ComputeQueue& queue, const StepClock& clock, const KernelPlan& plan,
                                CommKind op, MPI_Comm comm, std::uint64_t bytes) {
  const auto repeats = static_cast<std::uint32_t>(o.repeats), warmup = static_cast<std::uint32_t>(o.warmup);
  InterferencePoint p;
  barrier(comm, kTimeout_s, "eppsim-bench interference: barrier before the compute alone");
  // Alone, the loop still wakes every poll interval, with nothing to poll: so the slowdown is what the
  // communication adds, not what waking or sleeping does to this thread's share of a busy machine.
  const double poll_s = RankExecutorOptions{}.poll_interval_beside_compute_s;
  p.compute_alone_s = median(time_plan(queue, plan, warmup, repeats, poll_s));
  // A rank that finished first waits here without spinning, as blocking MPI calls would, on a core
  // the other rank's compute may need.
  barrier(comm, kTimeout_s, "eppsim-bench interference: barrier after the compute alone");
  std::vector<double> comm_alone;
  for (int r = 0; r < o.repeats; ++r) {
    const BenchPoint b = measure_comm(o.backend, op, comm, bytes, o.iterations, o.warmup);
    comm_alone.push_back(b.time_s);
    p.correct = p.correct && b.correct;
  }
  p.comm_alone_s = median(comm_alone);

  const std::unique_ptr<CommWindow> window = make_window(o.backend, op, comm, bytes, clock);
  int k = window_calls(p.compute_alone_s, p.comm_alone_s, window->min_call_s());
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &k, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  const std::string what = fmt::format("eppsim-bench interference: {}", comm_kind_name(op));
  std::vector<double> compute_beside, comm_beside;
  for (int w = 0, doublings = 0; w < o.warmup + o.repeats;) {
    barrier(comm, kTimeout_s, "eppsim-bench interference: barrier before a window");
    const WindowTimes times = run_window(queue, clock, plan, *window, k, poll_s, kTimeout_s, what);
    int whole = times.compute_s.empty() ? 0 : 1;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, &whole, 1, MPI_INT, MPI_LAND, comm, &request), "MPI_Iallreduce");
    wait_all(std::span<MPI_Request>(&request, 1), kTimeout_s, "eppsim-bench interference: agreeing on a window");
    if (!whole) {  // the communication ended before a whole layer did, on some rank: lengthen the window
      if (++doublings > kMaxDoublings)
        throw std::runtime_error(fmt::format("{} of {} B: no window of {} calls held a whole layer", comm_kind_name(op),
                                             bytes, k));
      k *= 2;
      continue;
    }
    if (w++ < o.warmup) continue;
    compute_beside.insert(compute_beside.end(), times.compute_s.begin(), times.compute_s.end());
    comm_beside.push_back(times.comm_per_call_s);
  }
  p.compute_beside_s = median(compute_beside);
  p.comm_beside_s = median(comm_beside);
  p.iterations = k;
  p.correct = p.correct && window->received_correctly();
  double times[] = {p.compute_alone_s, p.compute_beside_s, p.comm_alone_s, p.comm_beside_s};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, times, 4, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  p.compute_alone_s = times[0];
  p.compute_beside_s = times[1];
  p.comm_alone_s = times[2];
  p.comm_beside_s = times[3];
  int ok = p.correct ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
  p.correct = ok != 0;
  return p;
}

// This rank's ComputeQueue: cpu as eppsim-bench compute's; cuda on the GPU that
// NCCL uses (this rank's local GPU, selected here), not always device 0.
std::unique_ptr<ComputeQueue> make_queue(const std::string& backend, const StepClock& clock, std::string& device) {
#ifdef EPPSIM_WITH_NCCL
  if (backend == "cuda") {
    CudaComputeOptions options;
    options.device = nccl_bench_setup();
    device = cuda_device_name(options.device);
    return make_cuda_compute_queue(clock, options);
  }
#endif
  std::string attention;
  return make_bench_compute_queue(backend, clock, device, attention);
}

int bench(const Options& o, int rank, int size) {
  if (size < 2) throw InputError("eppsim-bench interference: needs at least 2 ranks (mpirun -np 2 or more)");
  const ResolvedScenario scenario = load_scenario(o.scenario);
  if (scenario.workload.collective) {
    throw InputError(fmt::format("{}: workload.collective: eppsim-bench interference needs a training workload with a model",
                                 scenario.source));
  }
  const proto::ModelShape model = to_model_shape(scenario.model);
  // One layer's forward (the second where there is one: no embedding), as compute_bench's layer rows.
  proto::ComputeOp layer;
  layer.set_phase(proto::FORWARD);
  layer.set_first_layer(model.layers() > 1 ? 1 : 0);
  layer.set_layer_count(1);
  layer.set_shards(1);
  const std::uint64_t tokens = o.tokens > 0 ? o.tokens : scenario.workload.max_length;
  add_segment(layer, Segment{tokens, 0});
  const KernelPlan plan = plan_kernels(model, layer, {});
  StepClock clock;
  std::string device;
  const std::unique_ptr<ComputeQueue> queue = make_queue(o.backend, clock, device);

  google::protobuf::Struct file;
  auto& fields = *file.mutable_fields();
  fields["eppsim_bench"].set_number_value(1);
  fields["kind"].set_string_value("interference");
  fields["backend"].set_string_value(o.backend);
  fields["device"].set_string_value(device);
  fields["ranks"].set_number_value(size);
  from_json(to_json(model), fields["model"].mutable_struct_value(), "model shape");
  auto* results = fields["results"].mutable_list_value();
  bool all_correct = true;
  for (const CommKind op : o.ops) {
    // Every rank, or ranks 0 and 1 for send-recv; the others wait at the barrier below.
    const bool member = op != CommKind::SendRecv || rank < 2;
    MPI_Comm comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank, &comm), "MPI_Comm_split");
    if (comm != MPI_COMM_NULL) {
      int n = 0;
      MPI_Comm_size(comm, &n);
      const bool crosses = group_crosses_nodes(comm);
      for (const std::uint64_t bytes : o.bytes) {
        const InterferencePoint p = measure_point(o, *queue, clock, plan, op, comm, bytes);
        all_correct = all_correct && p.correct;
        if (rank != 0) continue;
        *results->add_values()->mutable_struct_value() =
            interference_row({op, bytes, n, crosses, tokens, o.repeats}, p);
        fmt::print(stderr, "{:>15} n={} {:>10} B  compute {:8.2f} -> {:8.2f} ms (x{:.3f})  comm {:10.1f} -> {:10.1f} us (x{:.2f})  {}\n",
                   comm_kind_name(op), n, bytes, p.compute_alone_s * 1e3, p.compute_beside_s * 1e3,
                   p.compute_beside_s / p.compute_alone_s, p.comm_alone_s * 1e6, p.comm_beside_s * 1e6,
                   p.comm_beside_s / p.comm_alone_s, p.correct ? "ok" : "WRONG");
      }
      MPI_Comm_free(&comm);
    }
    barrier(MPI_COMM_WORLD, kTimeout_s, "eppsim-bench interference: barrier after an op");
  }
  if (rank == 0) write_file_atomically(o.out, to_json(file) + "\n");
  if (rank == 0 && !all_correct) {
    fmt::print(stderr, "eppsim-bench interference: some results are wrong (correct: false in {})\n", o.out);
    return 1;
  }
  return 0;
}

}  // namespace

int run_interference_bench(int argc, char** argv) {
  return run_under_mpi("eppsim-bench interference", argc, argv, [&](int rank, int size) {
    const auto options = parse(argc, argv, rank);
    return options ? bench(*options, rank, size) : 0;
  });
}

}  // namespace eppsim::runtime
