#include "runtime/bench/comm_bench.h"

#include <mpi.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <google/protobuf/struct.pb.h>

#include "base/errors.h"
#include "base/input_limits.h"
#include "base/memory_limit.h"
#include "base/units.h"
#include "runtime/comm_bench_data.h"
#include "runtime/bench/comm_measure.h"
#include "runtime/mpi/mpi_groups.h"
#include "runtime/mpi/mpi_main.h"
#include "runtime/mpi/mpi_wait.h"
#include "base/proto_io.h"
#ifdef EPPSIM_WITH_NCCL
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

struct BenchOptions {
  std::string backend;
  std::string out;
  std::vector<CommKind> ops;
  std::vector<std::uint64_t> bytes;
  int iterations = 20;
  std::string max_memory;
  int warmup = 5;
};

std::optional<BenchOptions> parse(int argc, char** argv, int rank) {
  BenchOptions o;
  std::string ops = "send-recv,all-reduce,all-gather,reduce-scatter,all-to-all";
  std::string bytes;
  po::options_description options("mpirun -np N eppsim-bench comm --backend cpu --out BENCH.json [options]");
  options.add_options()("help,h", "show this help")                                                //
      ("backend", po::value(&o.backend)->required(), "cpu (MPI) or cuda (NCCL)")                                   //
      ("out", po::value(&o.out)->required(), "the BENCH.json to write")                             //
      ("ops", po::value(&ops), "comma-separated: send-recv, all-reduce, all-gather, reduce-scatter, all-to-all, broadcast")
      ("bytes", po::value(&bytes), "comma-separated sizes (\"1KiB,1MiB\"; default powers of 2 from 1 KiB to 64 MiB)")
      ("iterations", po::value(&o.iterations)->default_value(20), "timed calls per point")
      ("max-memory", po::value(&o.max_memory), "the most host memory the ranks of a machine may take together, "
       "e.g. 16GiB (default: 85% of the machine's memory)")
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
  check_bench_backend("eppsim-bench comm", o.backend, kWithNccl);
  o.ops = parse_bench_ops("eppsim-bench comm", ops);
  if (bytes.empty()) {
    for (std::uint64_t b = 1024; b <= (std::uint64_t{64} << 20); b *= 2) o.bytes.push_back(b);
  } else {
    o.bytes = parse_bench_sizes(bytes);
  }
  if (o.ops.empty() || o.bytes.empty()) throw InputError("eppsim-bench comm: --ops and --bytes: must not be empty");
  if (!o.max_memory.empty()) set_memory_limit_from_option("eppsim-bench comm: ", o.max_memory);
  if (o.iterations < 1 || o.iterations > static_cast<int>(limits::kMaxBenchRepeats)) {
    throw InputError(fmt::format("eppsim-bench comm: --iterations: must be in [1, {}], got {}", limits::kMaxBenchRepeats,
                                 o.iterations));
  }
  if (o.warmup < 0 || o.warmup > static_cast<int>(limits::kMaxBenchRepeats)) {
    throw InputError(fmt::format("eppsim-bench comm: --warmup: must be in [0, {}], got {}", limits::kMaxBenchRepeats,
                                 o.warmup));
  }
  return o;
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

std::string device_name([[maybe_unused]] const BenchOptions& o) {  // used in NCCL builds only
#ifdef EPPSIM_WITH_NCCL
  if (o.backend == "cuda") return nccl_device_name();
#endif
  return fmt::format("{} (MPI)", cpu_name());
}

// The memory guard before any buffer: each rank holds its send and receive
// buffers and host copies of both (what it sends, what it checks), fp32, for
// the largest size on the whole group; the ranks of a machine side by side.
void check_comm_bench_memory(const BenchOptions& o, int size) {
  std::uint64_t elements = 0;
  const std::uint64_t largest = *std::max_element(o.bytes.begin(), o.bytes.end());
  for (const CommKind op : o.ops) {
    const CommShape shape = bench_shape(op, largest, static_cast<std::uint32_t>(std::max(size, 2)));
    elements = std::max(elements, 2 * (shape.send_elements + shape.recv_elements));
  }
  const int local_ranks = ranks_on_this_machine();
  check_memory_estimate(fmt::format("eppsim-bench comm: buffers of {} on {} ranks, {} on this machine",
                                    format_bytes(Bytes(largest)), size, local_ranks),
                        elements * sizeof(float) * static_cast<std::uint64_t>(local_ranks),
                        "give smaller --bytes, or raise --max-memory");
}

int bench(const BenchOptions& o, int rank, int size) {
  // One rank: only NCCL, whose one-rank communicator still runs the
  // collectives' kernels and, in all-to-all, a send to itself (the check that
  // the NCCL path works on a machine of one GPU; runtime/README.md).
  if (size < 2 && o.backend != "cuda") {
    throw InputError("eppsim-bench comm: needs at least 2 ranks (mpirun -np 2 or more; --backend cuda also runs on 1)");
  }
  check_comm_bench_memory(o, size);
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
  for (int n = size == 1 ? 1 : 2; n <= size; n *= 2) {
    // The first n ranks; the others pass MPI_UNDEFINED and wait.
    MPI_Comm comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &comm), "MPI_Comm_split");
    if (comm != MPI_COMM_NULL) {
      const bool crosses = group_crosses_nodes(comm);
      for (const CommKind op : o.ops) {
        if (op == CommKind::SendRecv && n != 2) continue;  // ranks 0 and 1 only (a one-rank run: all-to-all's)
        for (const std::uint64_t bytes : o.bytes) {
          BenchPoint p = measure_comm(o.backend, op, comm, bytes, o.iterations, o.warmup);
          // The slowest rank's time; correct only if every rank received correctly.
          int ok = p.correct ? 1 : 0;
          check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
          check_mpi(MPI_Allreduce(MPI_IN_PLACE, &p.time_s, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
          p.correct = ok != 0;
          if (rank != 0) continue;
          const auto un = static_cast<std::uint32_t>(n);
          const double size = static_cast<double>(bytes);
          const double algbw = p.time_s > 0 ? algbw_bytes(op, un, size) / p.time_s : 0.0;
          const double busbw = p.time_s > 0 ? bus_bytes(op, un, size) / p.time_s : 0.0;
          auto& row = *results->add_values()->mutable_struct_value()->mutable_fields();
          row["op"].set_string_value(std::string(comm_kind_name(op)));
          row["bytes"].set_number_value(static_cast<double>(bytes));
          row["group_size"].set_number_value(n);
          row["crosses_nodes"].set_bool_value(crosses);
          row["time_s"].set_number_value(p.time_s);
          row["iterations"].set_number_value(o.iterations);
          row["algbw_Bps"].set_number_value(algbw);
          row["busbw_Bps"].set_number_value(busbw);
          row["correct"].set_bool_value(p.correct);
          fmt::print(stderr, "{:>15} n={} {:>10} B {:>10.1f} us  algbw {:7.3f} GB/s  busbw {:7.3f} GB/s  {}\n", comm_kind_name(op),
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
  return run_under_mpi("eppsim-bench comm", argc, argv, [&](int rank, int size) {
    const auto options = parse(argc, argv, rank);
    return options ? bench(*options, rank, size) : 0;
  });
}

}  // namespace eppsim::runtime
