#pragma once
// A sweep file (proto/sweep.proto) read, checked and expanded into its points,
// for `eppsim sweep` (sweep_runner.h).
//
// The grid is every combination of the axes' values, the first axis slowest;
// a point gets the sweep's `set` overrides, then each axis's FIELD=VALUE (every
// field of a zipped axis at the same step). `skip` filters leave out the points
// that meet all conditions of one of them. A point's value of an axis, in
// results and in filters, is its step's label (SweepAxis.labels), by default
// its first field's value (a scenario file's name without folder and
// extension).
//
// The base scenario is the sweep's `scenario`, or, per point, the value of an
// axis field named `scenario` (a scenario file relative to the sweep file;
// one such field at most, in place of the sweep's `scenario`):
// a grid over several scenario files, each read once.
//
// Checked before any point runs, each failure an InputError
// "SWEEP:LINE: FIELD: rule": strict text format; `command` "run" or "topo"
// (or unset); a base scenario, in `scenario`
// or an axis, each readable; every `set` and every axis value a valid --set of
// every base scenario (a field
// it reaches, a value of the field's type); an axis with at least one field,
// each field with values or a range (one, not both), zipped fields with as
// many values each, a range with exactly one of step > 0 and factor > 1,
// finite, start <= stop and at most kMaxSweepPoints values; axis names
// distinct; labels one per step and distinct; filter conditions naming axes; the grid at most
// limits::kMaxSweepPoints points. A point's own impossible combination (an SP
// degree that does not divide the heads) is not checked here: that point's
// run fails, and its error is recorded.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "proto/scenario.pb.h"
#include "proto/sweep.pb.h"

namespace eppsim {

struct SweepPointSpec {
  std::uint32_t index = 0;              // position in grid order (after the filters)
  std::vector<std::string> values;      // one per axis: its step's label
  std::size_t base = 0;                 // its base scenario: SweepPlan::bases[base]
  std::vector<std::string> overrides;   // FIELD=VALUE: the sweep's `set`, then the axes' (not `scenario`)
};

struct SweepBase {
  std::filesystem::path file;  // relative to the working directory
  proto::Scenario scenario;    // as parsed (before any override), read once
};

struct SweepPlan {
  proto::Sweep sweep;
  std::filesystem::path file;       // the sweep file, as given
  std::vector<SweepBase> bases;     // the base scenarios: one, or one per value of the `scenario` axis
  std::vector<std::string> axes;    // axis names, in order
  std::vector<SweepPointSpec> points;
};

// Reads and checks `file` and expands its grid, as above.
SweepPlan read_sweep(const std::filesystem::path& file);

// Keeps only the points whose indices `list` names ("0,3,7-9"), for
// `eppsim sweep --points`: a try of a few points of a large sweep, or a check
// of a shipped study's rows. InputError naming `--points` for a list that does
// not parse or names no point of the sweep.
void select_points(SweepPlan* plan, const std::string& list);

// The range's values as --set text: whole numbers without a fraction, others
// in the shortest form that reads back the same. InputError (naming `where`)
// for a range that breaks the rules above.
std::vector<std::string> range_values(const proto::SweepRange& range, const std::string& where);

// A point's identity: a 64-bit FNV-1a hash, as 16 hex digits, of eppsim's
// version and the point's effective scenario in text format. Points that run
// the same scenario share it; a rerun finds its finished points by it.
std::string point_key(const proto::Scenario& effective);

}  // namespace eppsim
