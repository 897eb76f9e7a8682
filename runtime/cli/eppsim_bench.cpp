// eppsim-bench comm|compute [options] --out BENCH.json
// The exec branch's minimal main: it runs `comm` (runtime/bench/comm_bench.h).
// The integrator keeps helper "kernels"'s main, which also runs `compute`.
#include <cstdio>
#include <string_view>

#include "runtime/bench/comm_bench.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "comm") return eppsim::runtime::run_comm_bench(argc - 1, argv + 1);
  std::fprintf(stderr, "usage: mpirun -np N eppsim-bench comm --backend cpu --out BENCH.json [options]\n"
                       "(this build has no `compute` subcommand)\n");
  return 2;
}
