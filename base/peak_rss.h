#pragma once
// Peak resident sets so far (getrusage), in bytes: what the speed probe,
// `timings.json` and the analytic engine's phase log report.

namespace eppsim {

// This process's own.
double peak_rss_bytes();

// The largest of the child processes this process has waited for (the flow
// engine's forked simulation: sim/engine/forked_run.h); 0 when there is none.
double peak_rss_of_children_bytes();

}  // namespace eppsim
