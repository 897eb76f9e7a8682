#pragma once
// `eppsim calibrate BENCH.json... -o CALIBRATION --held-out OTHER.json...`:
// how well a calibration's fits predict benchmark rows they were not fitted
// to (another run, other sizes, other token counts), each fit scored on the
// held-out rows of its kind as calibration.proto's FitQuality scores it on its
// own (r^2, max and rms relative error):
//   layer rows     by the forward or backward fit of their pass;
//   comm rows      by the collective fit of their (op, group size, crosses_nodes);
//   interference   per class of traffic, compute_beside_s and comm_beside_s
//   rows           by the class's one factor and by its factors at the row's
//                  size (models/interference.h's interpolation of by_size), so
//                  that the two models can be compared on sizes between the
//                  fitted ones. Factors as fitted, not clamped to >= 1.
// Rows no fit covers (another op or group size, attention and GEMM rows) are
// counted, not scored.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "proto/bench.pb.h"
#include "proto/calibration.pb.h"

namespace eppsim {

struct HeldOutScore {
  std::string fit;  // e.g. "forward", "all-reduce n=2 intra-node", "beside point-to-point, compute by size"
  proto::FitQuality quality;
};

struct HeldOutCheck {
  std::vector<HeldOutScore> scores;  // layer fits, then collective fits, then interference
  std::uint64_t unscored_rows = 0;
};

HeldOutCheck check_held_out(const proto::Calibration& calibration, std::span<const proto::BenchFile> files);

// A line per score, for the terminal.
std::string held_out_summary(const HeldOutCheck& check);

}  // namespace eppsim
