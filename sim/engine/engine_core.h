#pragma once
// What the simulated engines (analytic, flow) share around the executor core
// they run on: the core's options for a simulated run, and the progress line
// they update as ops finish.
#include <cstddef>
#include <string>

#include "schedule/executor/executor_core.h"

namespace eppsim {

// The core's options for a simulated run: at most `max_blocked_ops_reported`
// ops named when a Schedule deadlocks; with `op_events`, every op's event and
// the memory samples, else per-rank busy times (a report then reads only the
// memory peaks).
ExecutorOptions simulated_core_options(std::size_t max_blocked_ops_reported, bool op_events);

// The progress line's text at simulated time `now_s`, `elapsed_s` of wall time in:
// "1.234 s simulated, 5000 of 80000 ops, 2.50 M ops/s".
std::string simulation_progress(const ExecutorCore& core, double now_s, double elapsed_s);

}  // namespace eppsim
