#pragma once
// One point of a sweep run in this process (`eppsim sweep SWEEP -o DIR --point
// N`, what each of the sweep's worker processes does): the base scenario with
// the point's overrides, planned and simulated as `eppsim run` does, and its
// outcome written to DIR/points/KEY.json (sweep_runner.h). With run outputs
// asked for (SweepOptions::outputs other than "none") also DIR/runs/KEY/.
#include <cstdint>

#include "sim/sweep/sweep_runner.h"

namespace eppsim {

// Errors of the point itself (its overrides, resolving, planning, simulating)
// are recorded in its file, not thrown; a failure to write the file throws.
// InputError for an index past the sweep's points.
void run_sweep_point(const SweepPlan& plan, std::uint32_t index, const SweepOptions& options);

}  // namespace eppsim
