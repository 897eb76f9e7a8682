// eppsim-bench: the runtime's microbenchmarks, one command for all of them.
//   eppsim-bench compute [options] --out BENCH.json   (runtime/bench/compute_bench.h)
//   eppsim-bench comm [options] --out BENCH.json      (runtime/bench/comm_bench.h, under mpirun)
//   eppsim-bench interference [options] --out BENCH.json (runtime/bench/interference_bench.h, under mpirun)
// Exit status: 0 on success, 2 on bad input, 1 on any other failure.
#include <cstdio>
#include <exception>
#include <string_view>

#include <fmt/format.h>

#include "base/errors.h"
#include "runtime/bench/comm_bench.h"
#include "runtime/bench/compute_bench.h"
#include "runtime/bench/interference_bench.h"

namespace {

constexpr std::string_view kUsage =
    "usage: eppsim-bench compute|comm|interference [options] --out BENCH.json\n"
    "  compute --scenario FILE --backend cpu|cuda [--tokens LIST] [--context LIST] [--repeats N] [--warmup N]\n"
    "  comm    --backend cpu|cuda [--ops LIST] [--bytes LIST] [--iterations N]   (one process per rank, mpirun)\n"
    "  interference --scenario FILE --backend cpu|cuda [--ops LIST] [--bytes LIST] [--tokens S] [--repeats N]   (mpirun)\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "eppsim-bench: error: a command is required: compute, comm or interference (see eppsim-bench --help)\n");
    return 2;
  }
  const std::string_view command = argv[1];
  try {
    if (command == "compute") return eppsim::runtime::run_compute_bench(argc - 2, argv + 2);
    if (command == "comm") return eppsim::runtime::run_comm_bench(argc - 1, argv + 1);
    if (command == "interference") return eppsim::runtime::run_interference_bench(argc - 1, argv + 1);
    if (command == "-h" || command == "--help") {
      fmt::print("{}", kUsage);
      return 0;
    }
    fmt::print(stderr, "eppsim-bench: error: unknown command '{}' (commands: compute, comm, interference; see eppsim-bench --help)\n",
               command);
    return 2;
  } catch (const eppsim::InputError& e) {
    fmt::print(stderr, "eppsim-bench: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "eppsim-bench {}: {}\n", command, e.what());
    return 1;
  }
}
