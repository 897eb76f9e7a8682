#pragma once
// `eppsim-bench comm` (helper "exec" writes it: runtime/bench/comm_bench.cpp).
// Declared here so that the shared main (runtime/cli/eppsim_bench.cpp) names
// it; until that branch is merged the main answers "not built" for `comm`.

namespace eppsim::runtime {

// The subcommand; `argv` holds the arguments after "comm".
int run_comm_bench(int argc, char** argv);

}  // namespace eppsim::runtime
