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
#include "runtime/bench/comm_bench_data.h"
#include "runtime/comm_plan.h"
#include "runtime/mpi/mpi_wait.h"
#include "traces/proto_io.h"
#ifdef EPPSIM_WITH_NCCL
#include "runtime/cuda/nccl_bench.h"
#endif

namespace po = boost::program_options;

namespace eppsim::runtime {
namespace {

struct OpInfo {
  BenchOp op;
  std::string_view name;
};

constexpr OpInfo kOps[] = {
    {BenchOp::SendRecv, "send-recv"},         {BenchOp::AllReduce, "all-reduce"}, {BenchOp::AllGather, "all-gather"},
    {BenchOp::ReduceScatter, "reduce-scatter"}, {BenchOp::AllToAll, "all-to-all"},
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
      ("backend", po::value(&o.backend)->required(), "cpu (MPI) or cuda (NCCL)")                                   //
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
  if (o.backend != "cpu" && o.backend != "cuda") {
    throw InputError(fmt::format("eppsim-bench comm: --backend: must be cpu or cuda, got '{}'", o.backend));
  }
#ifndef EPPSIM_WITH_NCCL
  if (o.backend == "cuda") throw InputError("eppsim-bench comm: --backend cuda: this build has no CUDA/NCCL");
#endif
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

// One (op, group, size) point with MPI on the members of `comm`.
BenchPoint measure_mpi(BenchOp op, MPI_Comm comm, std::uint64_t bytes, int iterations, int warmup) {
  int me = 0, n = 0;
  check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &n), "MPI_Comm_size");
  const CommShape shape = bench_shape(op, bytes, static_cast<std::uint32_t>(n));
  if (std::max({shape.count, shape.send_elements, shape.recv_elements}) > static_cast<std::uint64_t>(INT32_MAX)) {
    throw InputError(fmt::format("eppsim-bench comm: --bytes: {} is more than one MPI call moves", bytes));
  }
  std::vector<float> send = bench_send_buffer(shape, static_cast<std::uint32_t>(me));
  std::vector<float> recv(shape.recv_elements, -1.0f);
  const int count = static_cast<int>(shape.count);
  auto call = [&] {
    switch (op) {
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
  for (int i = 0; i < warmup; ++i) call();
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) call();
  const double mean_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
  const bool correct = bench_received_correctly(op, shape, static_cast<std::uint32_t>(me), static_cast<std::uint32_t>(n), recv);
  return {mean_s, correct};
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

BenchPoint measure(const BenchOptions& o, BenchOp op, MPI_Comm comm, std::uint64_t bytes) {
#ifdef EPPSIM_WITH_NCCL
  if (o.backend == "cuda") return measure_nccl(op, comm, bytes, o.iterations, o.warmup);
#endif
  return measure_mpi(op, comm, bytes, o.iterations, o.warmup);
}

std::string device_name(const BenchOptions& o) {
#ifdef EPPSIM_WITH_NCCL
  if (o.backend == "cuda") return nccl_device_name();
#endif
  return fmt::format("{} (MPI)", cpu_name());
}

int bench(const BenchOptions& o, int rank, int size) {
  if (size < 2) throw InputError("eppsim-bench comm: needs at least 2 ranks (mpirun -np 2 or more)");
#ifdef EPPSIM_WITH_NCCL
  if (o.backend == "cuda") nccl_bench_setup();
#endif
  google::protobuf::Struct file;
  auto& fields = *file.mutable_fields();
  fields["eppsim_bench"].set_number_value(1);
  fields["kind"].set_string_value("comm");
  fields["backend"].set_string_value(o.backend);
  fields["device"].set_string_value(device_name(o));
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
          BenchPoint p = measure(o, info.op, comm, bytes);
          // The slowest rank's time; correct only if every rank received correctly.
          int ok = p.correct ? 1 : 0;
          check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
          check_mpi(MPI_Allreduce(MPI_IN_PLACE, &p.time_s, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
          p.correct = ok != 0;
          if (rank != 0) continue;
          const auto un = static_cast<std::uint32_t>(n);
          const double algbw = p.time_s > 0 ? bench_algbw_bytes(info.op, bytes, un) / p.time_s : 0.0;
          const double busbw = algbw * bench_bus_factor(info.op, un);
          auto& row = *results->add_values()->mutable_struct_value()->mutable_fields();
          row["op"].set_string_value(std::string(info.name));
          row["bytes"].set_number_value(static_cast<double>(bytes));
          row["group_size"].set_number_value(n);
          row["crosses_nodes"].set_bool_value(crosses != 0);
          row["time_s"].set_number_value(p.time_s);
          row["iterations"].set_number_value(o.iterations);
          row["algbw_Bps"].set_number_value(algbw);
          row["busbw_Bps"].set_number_value(busbw);
          row["correct"].set_bool_value(p.correct);
          fmt::print(stderr, "{:>15} n={} {:>10} B {:>10.1f} us  algbw {:7.3f} GB/s  busbw {:7.3f} GB/s  {}\n", info.name,
                     n, bytes, p.time_s * 1e6, algbw / 1e9, busbw / 1e9,
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
