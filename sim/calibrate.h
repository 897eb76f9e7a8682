#pragma once
// `eppsim calibrate BENCH.json... -o CALIBRATION`: the cost model's
// coefficients fitted to microbenchmarks (`eppsim-bench compute|comm|interference`; the
// BENCH.json format is proto/bench.proto), with how well they fit.
//
//   compute  per pass (forward, backward), from the "layer" rows (one whole
//            transformer layer, one shard, s new tokens after c of context):
//              time = alpha1 * ((c + s)^2 - c^2) + alpha2 * s + beta
//            (models/compute_cost.h's CalibratedComputeCost); where the file has
//            them, the same form of the "attention" rows (the attention kernel
//            alone, gamma 0; at least 4 rows a pass) and, from the "gemm" rows
//            named lm_head* with their tokens, summed per (pass, s), the LM
//            head's alpha2 * s + beta (at least 3 values of s a pass)
//   comm     per (op, group size, crosses nodes), from the comm rows:
//              time = latency + bus_bytes(op, n, bytes) / bus_bandwidth
//            (bus bytes as nccl-tests counts them: models/network/calibrated_network.h)
//   interference  per class of traffic (point-to-point: send-recv rows;
//            intra-node-collective and inter-node-collective: the other ops by
//            crosses_nodes), from `eppsim-bench interference` rows:
//              compute_beside_s = compute_slowdown * compute_alone_s
//              comm_beside_s    = comm_slowdown * comm_alone_s
//            over all the class's rows, and the same per message size of its
//            rows (by_size: the factors the engines interpolate between)
//            (calibration.proto's InterferenceFit; not clamped to >= 1)
//
// Fitting: linear least squares (LAPACK's dgelsd, from OpenBLAS) of the
// relative residuals (each row weighted by 1 / measured time), so that a
// 64 KiB message weighs as much as a 64 MiB one. Every coefficient is kept
// >= 0, as the cost models require: the fit is the best least-squares fit over
// the subsets of terms whose coefficients come out non-negative (the
// non-negative least-squares optimum; the unconstrained fit when it is
// already non-negative). A fit needs more points than coefficients (so that
// its quality measures something) and points that determine every
// coefficient. Quality (calibration.proto's FitQuality) is measured on the
// unweighted times.
//
// Bad input is an InputError naming the file, the field and the rule:
// malformed JSON, unknown keys, an unknown kernel, pass or op, a missing or
// non-positive time, a result marked incorrect, too few points (an
// interference class needs two rows), compute files of different models or
// devices.
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "models/interference.h"
#include "proto/bench.pb.h"
#include "proto/calibration.pb.h"

namespace eppsim {

// Reads and checks one BENCH.json (every row's fields, as above).
proto::BenchFile read_bench_file(const std::filesystem::path& path);

// The calibration of the benchmark files (at least one; compute, comm and
// interference files in any mix). `names` are the files as the user gave them, recorded in
// the calibration's sources; `files` the files themselves, in the same order.
proto::Calibration calibrate(std::span<const proto::BenchFile> files, std::span<const std::string> names);
// read_bench_file of each path, then calibrate.
proto::Calibration calibrate_files(std::span<const std::filesystem::path> paths);

// The class of traffic of a comm or interference row: send-recv is
// point-to-point, the other ops intra- or inter-node by crosses_nodes.
TrafficClass traffic_class_of(const proto::BenchResult& r);
// The regressors of a layer or attention row: the fit's terms over its
// sequences (models/compute_cost.h, calibrated_fit_terms).
std::vector<double> layer_regressors(const proto::BenchResult& r);

// One weighted linear least-squares problem: rows of regressors and the
// measured times they explain.
struct FitProblem {
  std::vector<std::vector<double>> rows;  // each of the coefficients' count
  std::vector<double> times_s;            // > 0
};

// The non-negative least-squares fit of the relative residuals (see above).
// Throws InputError "WHERE: ..." when there are no more points than
// coefficients, or the points do not determine every coefficient.
std::vector<double> fit_non_negative(const FitProblem& problem, const std::string& where);

// Quality of `coefficients` on the problem's points (unweighted).
proto::FitQuality fit_quality(const FitProblem& problem, std::span<const double> coefficients);

// A one-line summary per fit, for the terminal.
std::string calibration_summary(const proto::Calibration& calibration);

}  // namespace eppsim
