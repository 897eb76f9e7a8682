#pragma once
// The process's peak resident set so far (getrusage), in bytes: what the
// speed probe, `timings.json` and the analytic engine's phase log report.

namespace eppsim {

double peak_rss_bytes();

}  // namespace eppsim
