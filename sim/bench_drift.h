#pragma once
// How far a machine's kernels moved between two `eppsim-bench compute` runs
// of one model. `eppsim testbed` times the largest rows of its calibration's
// benchmark again right after the measured run (DIR/bench/compute-after.json)
// and writes the comparison (DIR/bench/drift.json), so that a validation error
// is read beside how much the machine itself changed between benchmarking and
// running: a shared 2-core VM's kernels moved by up to 11% within a minute and
// a validation loop's step by 40% within a morning, and an error smaller than
// the machine's own move cannot be told from it (docs/guide/runtime.md).
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/bench.pb.h"

namespace eppsim {

struct ComputeDrift {
  std::uint32_t rows = 0;           // rows of the later run found in the earlier one
  double before_s = 0.0;            // their times in the earlier run, summed
  double after_s = 0.0;             // the same rows in the later run, summed
  double least_row_ratio = 0.0;     // a row's later time over its earlier one: the least
  double most_row_ratio = 0.0;      // and the most
  // The matched rows' total, later over earlier, minus 1: positive when the
  // kernels ran slower later.
  double drift() const { return after_s / before_s - 1.0; }
};

// Rows match by kernel, pass, GEMM name and shape, tokens, context and
// segments. Throws InputError naming both files when they are not compute
// benchmarks of one backend and model, or when no row of `after` is in `before`.
ComputeDrift compute_drift(const proto::BenchFile& before, const proto::BenchFile& after, std::string_view before_file,
                           std::string_view after_file);

// The largest token count of `bench`'s layer rows without context or packing:
// what a re-timing runs (its layer, GEMMs, attention and LM head at that size).
// Throws InputError naming `file` when it has no such row.
std::uint64_t largest_plain_layer_tokens(const proto::BenchFile& bench, std::string_view file);

// drift.json: {"rows", "before_s", "after_s", "drift", "least_row_ratio",
// "most_row_ratio"}.
std::string compute_drift_json(const ComputeDrift& drift);

}  // namespace eppsim
