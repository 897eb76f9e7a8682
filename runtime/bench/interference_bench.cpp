#include "runtime/bench/interference_bench.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <google/protobuf/struct.pb.h>

#include "models/errors.h"
#include "models/units.h"
#include "runtime/bench/comm_bench_data.h"
#include "runtime/bench/comm_measure.h"
#include "runtime/bench/compute_bench.h"
#include "runtime/kernel_plan.h"
#include "runtime/mpi/mpi_main.h"
#include "runtime/mpi/mpi_wait.h"
#include "runtime/rank_executor.h"
#include "traces/model_shape.h"
#include "traces/proto_io.h"
#include "traces/scenario.h"

namespace po = boost::program_options;

namespace eppsim::runtime {
namespace {

// Bound on every wait (barriers, a window's communication), as eppsim-run's default --timeout.
constexpr double kTimeout_s = 300.0;
// Doublings of K before a window that holds no whole layer is an error.
constexpr int kMaxDoublings = 12;

struct Options {
  std::string scenario, backend, out;
  std::vector<BenchOp> ops;
  std::vector<std::uint64_t> bytes;
  std::uint64_t tokens = 0;  // 0: the scenario's max_length
  int repeats = 5, warmup = 1, iterations = 20;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::optional<Options> parse(int argc, char** argv, int rank) {
  Options o;
  std::string ops = "send-recv,all-reduce,all-gather,reduce-scatter,all-to-all", bytes = "64KiB,1MiB,16MiB";
  po::options_description options("mpirun -np N eppsim-bench interference --scenario FILE --backend cpu --out BENCH.json");
  options.add_options()("help,h", "show this help")                                                          //
      ("scenario", po::value(&o.scenario)->required(), "the scenario whose model computes")                //
      ("backend", po::value(&o.backend)->required(), "cpu (OpenBLAS and MPI)")                              //
      ("out", po::value(&o.out)->required(), "the BENCH.json to write")                                     //
      ("ops", po::value(&ops), "comma-separated: send-recv, all-reduce, all-gather, reduce-scatter, all-to-all")  //
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
  if (o.backend == "cuda") {
    throw InputError("eppsim-bench interference: --backend cuda: not measured yet (NCCL polled beside the CUDA queue); "
                     "use cpu");
  }
  if (o.backend != "cpu") {
    throw InputError(fmt::format("eppsim-bench interference: --backend: must be cpu or cuda, got '{}'", o.backend));
  }
  for (const auto& name : split_list(ops)) {
    const auto op = parse_bench_op(name);
    if (!op) throw InputError(fmt::format("eppsim-bench interference: --ops: unknown op '{}'", name));
    o.ops.push_back(*op);
  }
  for (const auto& item : split_list(bytes)) o.bytes.push_back(parse_bytes(item).count);
  if (o.ops.empty() || o.bytes.empty()) throw InputError("eppsim-bench interference: --ops and --bytes: must not be empty");
  if (vars.count("tokens") && o.tokens == 0) throw InputError("eppsim-bench interference: --tokens: must be > 0");
  if (o.repeats < 1) throw InputError(fmt::format("eppsim-bench interference: --repeats: must be >= 1, got {}", o.repeats));
  if (o.warmup < 1) throw InputError(fmt::format("eppsim-bench interference: --warmup: must be >= 1, got {}", o.warmup));
  if (o.iterations < 1)
    throw InputError(fmt::format("eppsim-bench interference: --iterations: must be >= 1, got {}", o.iterations));
  return o;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// One call of `op` started without blocking, as MpiCommEngine starts it
// (send-recv: a synchronous send from position 0 to position 1).
void start_op(BenchOp op, MPI_Comm comm, int me, const CommShape& shape, std::vector<float>& send,
              std::vector<float>& recv, std::vector<MPI_Request>& requests) {
  const int count = static_cast<int>(shape.count);
  MPI_Request r = MPI_REQUEST_NULL;
  switch (op) {
    case BenchOp::SendRecv:
      if (me == 0) check_mpi(MPI_Issend(send.data(), count, MPI_FLOAT, 1, 0, comm, &r), "MPI_Issend");
      if (me == 1) check_mpi(MPI_Irecv(recv.data(), count, MPI_FLOAT, 0, 0, comm, &r), "MPI_Irecv");
      break;
    case BenchOp::AllReduce:
      check_mpi(MPI_Iallreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, comm, &r), "MPI_Iallreduce");
      break;
    case BenchOp::AllGather:
      check_mpi(MPI_Iallgather(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, comm, &r), "MPI_Iallgather");
      break;
    case BenchOp::ReduceScatter:
      check_mpi(MPI_Ireduce_scatter_block(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, comm, &r),
                "MPI_Ireduce_scatter_block");
      break;
    case BenchOp::AllToAll:
      check_mpi(MPI_Ialltoall(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, comm, &r), "MPI_Ialltoall");
      break;
  }
  if (r != MPI_REQUEST_NULL) requests.push_back(r);
}

struct Window {
  std::vector<double> compute_s;  // the layers that ended inside the window
  double comm_per_iteration_s = 0.0;
};

// `iterations` calls of the op back to back beside the layer run back to back.
Window run_window(ComputeQueue& queue, const StepClock& clock, const KernelPlan& plan, BenchOp op, MPI_Comm comm,
                  int me, const CommShape& shape, std::vector<float>& send, std::vector<float>& recv, int iterations) {
  const double poll_s = RankExecutorOptions{}.poll_interval_beside_compute_s;
  barrier(comm, kTimeout_s, "eppsim-bench interference: barrier before a window");
  Window w;
  const double start_s = clock.now_s();
  ActivityId next = 0;
  // Two layers queued, so that the worker never waits for this loop to submit the next.
  queue.submit(next++, 0, plan);
  queue.submit(next++, 0, plan);
  std::vector<MPI_Request> requests;
  start_op(op, comm, me, shape, send, recv, requests);
  int started = 1;
  double comm_end_s = -1.0, last_end_s = start_s;
  while (comm_end_s < 0.0 || queue.in_flight() > 0) {
    if (comm_end_s < 0.0) {
      int done = 0;
      check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
                "MPI_Testall");
      if (done) {
        requests.clear();
        if (started < iterations) {
          start_op(op, comm, me, shape, send, recv, requests);
          ++started;
        } else {
          comm_end_s = clock.now_s();
        }
      } else if (clock.now_s() - start_s > kTimeout_s) {
        throw MpiTimeout(fmt::format("eppsim-bench interference: {} beside compute: no answer within {} s",
                                     bench_op_name(op), kTimeout_s));
      }
    }
    for (const Completion& c : queue.poll()) {
      if (comm_end_s < 0.0 || c.end_s <= comm_end_s) w.compute_s.push_back(c.end_s - last_end_s);
      last_end_s = c.end_s;
      if (comm_end_s < 0.0) queue.submit(next++, 0, plan);
    }
    queue.wait(comm_end_s < 0.0 ? poll_s : -1.0);
  }
  w.comm_per_iteration_s = (comm_end_s - start_s) / iterations;
  return w;
}

struct Point {
  double compute_alone_s = 0, compute_beside_s = 0, comm_alone_s = 0, comm_beside_s = 0;
  int iterations = 0;  // K
  bool correct = true;
};

// One (op, bytes) point on the members of `comm`: this rank's medians, then the slowest rank's.
Point measure_point(const Options& o, ComputeQueue& queue, const StepClock& clock, const KernelPlan& plan, BenchOp op,
                    MPI_Comm comm, std::uint64_t bytes) {
  int me = 0, n = 0;
  check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &n), "MPI_Comm_size");
  const auto repeats = static_cast<std::uint32_t>(o.repeats), warmup = static_cast<std::uint32_t>(o.warmup);
  Point p;
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

  int k = static_cast<int>(std::ceil(2.0 * p.compute_alone_s / std::max(p.comm_alone_s, poll_s)));
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &k, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  k = std::max(k, 1);
  const CommShape shape = bench_shape(op, bytes, static_cast<std::uint32_t>(n));
  std::vector<float> send = bench_send_buffer(shape, static_cast<std::uint32_t>(me));
  std::vector<float> recv(shape.recv_elements, -1.0f);
  std::vector<double> compute_beside, comm_beside;
  for (int window = 0, doublings = 0; window < o.warmup + o.repeats;) {
    Window w = run_window(queue, clock, plan, op, comm, me, shape, send, recv, k);
    int whole = w.compute_s.empty() ? 0 : 1;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, &whole, 1, MPI_INT, MPI_LAND, comm, &request), "MPI_Iallreduce");
    wait_all(std::span<MPI_Request>(&request, 1), kTimeout_s, "eppsim-bench interference: agreeing on a window");
    if (!whole) {  // the communication ended before a whole layer did, on some rank: lengthen the window
      if (++doublings > kMaxDoublings)
        throw std::runtime_error(fmt::format("{} of {} B: no window of {} calls held a whole layer", bench_op_name(op),
                                             bytes, k));
      k *= 2;
      continue;
    }
    if (window++ < o.warmup) continue;
    compute_beside.insert(compute_beside.end(), w.compute_s.begin(), w.compute_s.end());
    comm_beside.push_back(w.comm_per_iteration_s);
  }
  p.compute_beside_s = median(compute_beside);
  p.comm_beside_s = median(comm_beside);
  p.iterations = k;
  p.correct = p.correct && bench_received_correctly(op, shape, static_cast<std::uint32_t>(me),
                                                    static_cast<std::uint32_t>(n), recv);
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

int bench(const Options& o, int rank, int size) {
  if (size < 2) throw InputError("eppsim-bench interference: needs at least 2 ranks (mpirun -np 2 or more)");
  const ResolvedScenario scenario = load_scenario(o.scenario);
  if (scenario.collective) {
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
  const std::uint64_t tokens = o.tokens > 0 ? o.tokens : scenario.max_length;
  layer.add_segments()->set_tokens(tokens);
  const KernelPlan plan = plan_kernels(model, layer, {});
  StepClock clock;
  std::string device;
  const std::unique_ptr<ComputeQueue> queue = make_bench_compute_queue(o.backend, clock, device);

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
  for (const BenchOp op : o.ops) {
    // Every rank, or ranks 0 and 1 for send-recv; the others wait at the barrier below.
    const bool member = op != BenchOp::SendRecv || rank < 2;
    MPI_Comm comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank, &comm), "MPI_Comm_split");
    if (comm != MPI_COMM_NULL) {
      int n = 0;
      MPI_Comm_size(comm, &n);
      const bool crosses = group_crosses_nodes(comm);
      for (const std::uint64_t bytes : o.bytes) {
        const Point p = measure_point(o, *queue, clock, plan, op, comm, bytes);
        all_correct = all_correct && p.correct;
        if (rank != 0) continue;
        auto& row = *results->add_values()->mutable_struct_value()->mutable_fields();
        row["op"].set_string_value(std::string(bench_op_name(op)));
        row["bytes"].set_number_value(static_cast<double>(bytes));
        row["group_size"].set_number_value(n);
        row["crosses_nodes"].set_bool_value(crosses);
        row["tokens"].set_number_value(static_cast<double>(tokens));
        row["iterations"].set_number_value(p.iterations);
        row["repeats"].set_number_value(o.repeats);
        row["compute_alone_s"].set_number_value(p.compute_alone_s);
        row["compute_beside_s"].set_number_value(p.compute_beside_s);
        row["comm_alone_s"].set_number_value(p.comm_alone_s);
        row["comm_beside_s"].set_number_value(p.comm_beside_s);
        row["compute_slowdown"].set_number_value(p.compute_beside_s / p.compute_alone_s);
        row["comm_slowdown"].set_number_value(p.comm_beside_s / p.comm_alone_s);
        row["correct"].set_bool_value(p.correct);
        fmt::print(stderr, "{:>15} n={} {:>10} B  compute {:8.2f} -> {:8.2f} ms (x{:.3f})  comm {:10.1f} -> {:10.1f} us (x{:.2f})  {}\n",
                   bench_op_name(op), n, bytes, p.compute_alone_s * 1e3, p.compute_beside_s * 1e3,
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
