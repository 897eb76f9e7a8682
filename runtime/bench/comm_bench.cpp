#include "runtime/bench/comm_bench.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <google/protobuf/struct.pb.h>

#include "models/errors.h"
#include "models/units.h"
#include "runtime/comm_plan.h"
#include "runtime/mpi/mpi_wait.h"
#include "traces/proto_io.h"

namespace po = boost::program_options;

namespace eppsim::runtime {
namespace {

enum class BenchOp { SendRecv, AllReduce, AllGather, ReduceScatter, AllToAll };

struct OpInfo {
  BenchOp op;
  std::string_view name;
  proto::CollectiveKind kind;  // for comm_shape (send-recv: unused)
};

constexpr OpInfo kOps[] = {
    {BenchOp::SendRecv, "send-recv", proto::COLLECTIVE_KIND_UNSPECIFIED},
    {BenchOp::AllReduce, "all-reduce", proto::ALL_REDUCE},
    {BenchOp::AllGather, "all-gather", proto::ALL_GATHER},
    {BenchOp::ReduceScatter, "reduce-scatter", proto::REDUCE_SCATTER},
    {BenchOp::AllToAll, "all-to-all", proto::ALL_TO_ALL},
};

struct BenchOptions {
  std::string backend;
  std::string out;
  std::vector<OpInfo> ops;
  std::vector<std::uint64_t> bytes;
  int iterations = 20;
  int warmup = 5;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::optional<BenchOptions> parse(int argc, char** argv, int rank) {
  BenchOptions o;
  std::string ops = "send-recv,all-reduce,all-gather,reduce-scatter,all-to-all";
  std::string bytes;
  po::options_description options("mpirun -np N eppsim-bench comm --backend cpu --out BENCH.json [options]");
  options.add_options()("help,h", "show this help")                                                //
      ("backend", po::value(&o.backend)->required(), "cpu (MPI)")                                   //
      ("out", po::value(&o.out)->required(), "the BENCH.json to write")                             //
      ("ops", po::value(&ops), "comma-separated: send-recv, all-reduce, all-gather, reduce-scatter, all-to-all")
      ("bytes", po::value(&bytes), "comma-separated sizes (\"1KiB,1MiB\"; default powers of 2 from 1 KiB to 64 MiB)")
      ("iterations", po::value(&o.iterations)->default_value(20), "timed calls per point")
      ("warmup", po::value(&o.warmup)->default_value(5), "untimed calls before them");
  po::variables_map vars;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vars);
    if (vars.count("help")) {
      if (rank == 0) std::cout << options << "\n";
      return std::nullopt;
    }
    po::notify(vars);
  } catch (const po::error& e) {
    throw InputError(fmt::format("eppsim-bench comm: {}", e.what()));
  }
  if (o.backend != "cpu") {
    throw InputError(fmt::format("eppsim-bench comm: --backend: '{}' is not built into this benchmark (cpu only)", o.backend));
  }
  for (const auto& name : split_list(ops)) {
    const auto it = std::find_if(std::begin(kOps), std::end(kOps), [&](const OpInfo& i) { return i.name == name; });
    if (it == std::end(kOps)) throw InputError(fmt::format("eppsim-bench comm: --ops: unknown op '{}'", name));
    o.ops.push_back(*it);
  }
  if (bytes.empty()) {
    for (std::uint64_t b = 1024; b <= (std::uint64_t{64} << 20); b *= 2) o.bytes.push_back(b);
  } else {
    for (const auto& item : split_list(bytes)) o.bytes.push_back(parse_bytes(item).count);
  }
  if (o.ops.empty() || o.bytes.empty()) throw InputError("eppsim-bench comm: --ops and --bytes: must not be empty");
  if (o.iterations < 1) throw InputError(fmt::format("eppsim-bench comm: --iterations: must be >= 1, got {}", o.iterations));
  if (o.warmup < 0) throw InputError(fmt::format("eppsim-bench comm: --warmup: must be >= 0, got {}", o.warmup));
  return o;
}

// What rank `r` sends at element i: small integers, so float sums are exact.
float value(int r, std::uint64_t i) { return static_cast<float>(r + 1 + static_cast<int>(i % 7)); }

double bus_factor(BenchOp op, int n) {
  switch (op) {
    case BenchOp::SendRecv: return 1.0;
    case BenchOp::AllReduce: return 2.0 * (n - 1) / n;
    default: return static_cast<double>(n - 1) / n;
  }
}

struct Point {
  double time_s = 0.0;
  bool correct = false;
};

// One (op, group, size) point on the members of `comm` (its size n, this rank's position me).
Point measure(const OpInfo& info, MPI_Comm comm, std::uint64_t bytes, const BenchOptions& o) {
  int me = 0, n = 0;
  check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &n), "MPI_Comm_size");
  proto::Op op;
  if (info.op == BenchOp::SendRecv) {
    op.mutable_send()->set_size_bytes(bytes);
  } else {
    op.mutable_collective()->set_kind(info.kind);
    op.mutable_collective()->set_size_bytes(bytes);
  }
  const CommShape shape = comm_shape(op, {static_cast<std::uint32_t>(n)});
  const std::uint64_t send_elements = info.op == BenchOp::SendRecv ? shape.count : shape.send_elements;
  const std::uint64_t recv_elements = info.op == BenchOp::SendRecv ? shape.count : shape.recv_elements;
  if (std::max({shape.count, send_elements, recv_elements}) > static_cast<std::uint64_t>(INT32_MAX)) {
    throw InputError(fmt::format("eppsim-bench comm: --bytes: {} is more than one MPI call moves", bytes));
  }
  std::vector<float> send(send_elements), recv(recv_elements, -1.0f);
  for (std::uint64_t i = 0; i < send.size(); ++i) {
    // all-to-all and reduce-scatter: block p goes to rank p; element i of the whole buffer.
    send[i] = value(me, i);
  }
  const int count = static_cast<int>(shape.count);
  auto call = [&] {
    switch (info.op) {
      case BenchOp::SendRecv:
        if (me == 0) check_mpi(MPI_Send(send.data(), count, MPI_FLOAT, 1, 0, comm), "MPI_Send");
        if (me == 1) check_mpi(MPI_Recv(recv.data(), count, MPI_FLOAT, 0, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv");
        break;
      case BenchOp::AllReduce:
        check_mpi(MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, comm), "MPI_Allreduce");
        break;
      case BenchOp::AllGather:
        check_mpi(MPI_Allgather(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, comm), "MPI_Allgather");
        break;
      case BenchOp::ReduceScatter:
        check_mpi(MPI_Reduce_scatter_block(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, comm),
                  "MPI_Reduce_scatter_block");
        break;
      case BenchOp::AllToAll:
        check_mpi(MPI_Alltoall(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, comm), "MPI_Alltoall");
        break;
    }
  };
  for (int i = 0; i < o.warmup; ++i) call();
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iterations; ++i) call();
  double mean_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.iterations;

  // Check what the last call left.
  bool correct = true;
  const auto c = shape.count;
  const bool receives = info.op != BenchOp::SendRecv || me == 1;  // send-recv: only rank 1 receives
  for (std::uint64_t i = 0; receives && i < recv.size() && correct; ++i) {
    float expected = 0.0f;
    switch (info.op) {
      case BenchOp::SendRecv: expected = value(0, i); break;
      case BenchOp::AllReduce:
        for (int r = 0; r < n; ++r) expected += value(r, i);
        break;
      case BenchOp::AllGather: expected = value(static_cast<int>(i / c), i % c); break;
      case BenchOp::ReduceScatter:
        for (int r = 0; r < n; ++r) expected += value(r, static_cast<std::uint64_t>(me) * c + i);
        break;
      case BenchOp::AllToAll: expected = value(static_cast<int>(i / c), static_cast<std::uint64_t>(me) * c + i % c); break;
    }
    if (recv[i] != expected) correct = false;
  }
  int ok = correct ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &mean_s, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  return {mean_s, ok != 0};
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "cpu";
}

int bench(const BenchOptions& o, int rank, int size) {
  if (size < 2) throw InputError("eppsim-bench comm: needs at least 2 ranks (mpirun -np 2 or more)");
  google::protobuf::Struct file;
  auto& fields = *file.mutable_fields();
  fields["eppsim_bench"].set_number_value(1);
  fields["kind"].set_string_value("comm");
  fields["backend"].set_string_value(o.backend);
  fields["device"].set_string_value(cpu_name() + " (MPI)");
  fields["ranks"].set_number_value(size);
  auto* results = fields["results"].mutable_list_value();
  for (int n = 2; n <= size; n *= 2) {
    // The first n ranks; the others pass MPI_UNDEFINED and wait.
    MPI_Comm comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &comm), "MPI_Comm_split");
    int crosses = 0;
    if (comm != MPI_COMM_NULL) {
      MPI_Comm local = MPI_COMM_NULL;
      check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
      int local_size = 0;
      MPI_Comm_size(local, &local_size);
      MPI_Comm_free(&local);
      crosses = local_size < n ? 1 : 0;
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, &crosses, 1, MPI_INT, MPI_LOR, comm), "MPI_Allreduce");
      for (const auto& info : o.ops) {
        if (info.op == BenchOp::SendRecv && n != 2) continue;  // ranks 0 and 1 only
        for (const std::uint64_t bytes : o.bytes) {
          const Point p = measure(info, comm, bytes, o);
          if (rank != 0) continue;
          const double nccl_size = static_cast<double>(bytes) * (info.op == BenchOp::AllGather ? n : 1);
          const double algbw = p.time_s > 0 ? nccl_size / p.time_s : 0.0;
          auto& row = *results->add_values()->mutable_struct_value()->mutable_fields();
          row["op"].set_string_value(std::string(info.name));
          row["bytes"].set_number_value(static_cast<double>(bytes));
          row["group_size"].set_number_value(n);
          row["crosses_nodes"].set_bool_value(crosses != 0);
          row["time_s"].set_number_value(p.time_s);
          row["iterations"].set_number_value(o.iterations);
          row["algbw_Bps"].set_number_value(algbw);
          row["busbw_Bps"].set_number_value(algbw * bus_factor(info.op, n));
          row["correct"].set_bool_value(p.correct);
          fmt::print(stderr, "{:>15} n={} {:>10} B {:>10.1f} us  algbw {:7.3f} GB/s  busbw {:7.3f} GB/s  {}\n", info.name,
                     n, bytes, p.time_s * 1e6, algbw / 1e9, algbw * bus_factor(info.op, n) / 1e9,
                     p.correct ? "ok" : "WRONG");
        }
      }
      MPI_Comm_free(&comm);
    }
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }
  if (rank == 0) write_file_atomically(o.out, to_json(file) + "\n");
  bool all_correct = true;
  for (const auto& v : results->values()) all_correct = all_correct && v.struct_value().fields().at("correct").bool_value();
  if (rank == 0 && !all_correct) {
    fmt::print(stderr, "eppsim-bench comm: some results are wrong (correct: false in {})\n", o.out);
    return 1;
  }
  return 0;
}

}  // namespace

int run_comm_bench(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    const auto options = parse(argc, argv, rank);
    if (options) status = bench(*options, rank, size);
  } catch (const InputError& e) {
    status = 2;
    if (rank == 0) fmt::print(stderr, "eppsim-bench comm: error: {}\n", e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "eppsim-bench comm: rank {}: error: {}\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}

}  // namespace eppsim::runtime
