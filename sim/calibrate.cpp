#include "sim/calibrate.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <google/protobuf/util/message_differencer.h>

#include "models/compute_cost.h"
#include "models/network/calibrated_network.h"
#include "base/errors.h"
#include "scenario/field_locator.h"
#include "base/proto_io.h"

// LAPACK (OpenBLAS's, through Debian's liblapack.so): the minimum-norm
// least-squares solution by the SVD, with the effective rank.
extern "C" void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
                        const int* ldb, double* s, const double* rcond, int* rank, double* work, const int* lwork,
                        int* iwork, int* info);

namespace eppsim {
namespace {

constexpr std::uint32_t kBenchVersion = 1;

[[noreturn]] void fail(std::string_view file, std::string_view field, std::string_view rule) {
  throw InputError(fmt::format("{}: {}: {}", file, field, rule));
}

bool one_of(const std::string& value, std::initializer_list<std::string_view> known) {
  return std::find(known.begin(), known.end(), value) != known.end();
}

// One kernel or call timed: an hour is far past any benchmark row, and a time
// near 1e308 (a corrupted file) would make the fit's quality NaN.
constexpr double kMaxMeasuredSeconds = 3600.0;

// A measured time in seconds: present, > 0 and at most kMaxMeasuredSeconds.
void require_positive(std::string_view file, const std::string& field, bool present, double value) {
  if (!present) fail(file, field, "is missing");
  if (!(value > 0.0) || !(value <= kMaxMeasuredSeconds)) {
    fail(file, field, fmt::format("must be > 0 and at most {} s (one kernel or call timed), got {}", kMaxMeasuredSeconds, value));
  }
}

void require_positive_time(const proto::BenchResult& r, std::string_view file, const std::string& row) {
  require_positive(file, row + ".time_s", r.has_time_s(), r.time_s());
}

void check_compute_row(const proto::BenchResult& r, std::string_view file, const std::string& row) {
  if (r.has_op()) fail(file, row + ".op", "a compute file holds kernel rows, not comm rows");
  if (!r.has_kernel()) fail(file, row + ".kernel", "is missing");
  if (!one_of(r.kernel(), {"layer", "gemm", "attention"}))
    fail(file, row + ".kernel", fmt::format("unknown kernel {} (known: layer, gemm, attention)", quote_string(r.kernel())));
  if (!r.has_pass()) fail(file, row + ".pass", "is missing");
  if (!one_of(r.pass(), {"forward", "backward"}))
    fail(file, row + ".pass", fmt::format("unknown pass {} (known: forward, backward)", quote_string(r.pass())));
  require_positive_time(r, file, row);
  if (r.kernel() == "gemm") return;
  if (!r.has_tokens()) fail(file, row + ".tokens", "is missing");
  if (r.tokens() == 0) fail(file, row + ".tokens", "must be > 0, got 0");
  if (!r.has_context_tokens()) fail(file, row + ".context_tokens", "is missing");
  if (r.has_segments() && r.segments() == 0) fail(file, row + ".segments", "must be >= 1, got 0");
  if (r.has_segments() && r.kernel() != "layer") fail(file, row + ".segments", "only layer rows pack sequences");
}

// The op, bytes, group size and correctness of a comm or interference row.
void check_op_fields(const proto::BenchResult& r, std::string_view file, const std::string& row) {
  if (r.has_kernel()) fail(file, row + ".kernel", "a comm or interference file holds op rows, not kernel rows");
  if (!r.has_op()) fail(file, row + ".op", "is missing");
  const auto kind = parse_comm_kind(r.op());
  if (!kind) fail(file, row + ".op", fmt::format("unknown op {} (known: {})", quote_string(r.op()), comm_kind_names()));
  if (!r.has_bytes()) fail(file, row + ".bytes", "is missing");
  if (r.bytes() == 0) fail(file, row + ".bytes", "must be > 0, got 0");
  if (!r.has_group_size()) fail(file, row + ".group_size", "is missing");
  if (r.group_size() < 2) fail(file, row + ".group_size", fmt::format("must be >= 2, got {}", r.group_size()));
  if (*kind == CommKind::SendRecv && r.group_size() != 2)
    fail(file, row + ".group_size", fmt::format("must be 2 for send-recv, got {}", r.group_size()));
  if (r.has_correct() && !r.correct())
    fail(file, row + ".correct", "is false: the benchmark's result was wrong, so its time is not fitted");
}

void check_comm_row(const proto::BenchResult& r, std::string_view file, const std::string& row) {
  check_op_fields(r, file, row);
  require_positive_time(r, file, row);
}

void check_interference_row(const proto::BenchResult& r, std::string_view file, const std::string& row) {
  check_op_fields(r, file, row);
  if (!r.has_tokens()) fail(file, row + ".tokens", "is missing");
  if (r.tokens() == 0) fail(file, row + ".tokens", "must be > 0, got 0");
  require_positive(file, row + ".compute_alone_s", r.has_compute_alone_s(), r.compute_alone_s());
  require_positive(file, row + ".compute_beside_s", r.has_compute_beside_s(), r.compute_beside_s());
  require_positive(file, row + ".comm_alone_s", r.has_comm_alone_s(), r.comm_alone_s());
  require_positive(file, row + ".comm_beside_s", r.has_comm_beside_s(), r.comm_beside_s());
}

std::size_t traffic_class(const proto::BenchResult& r) { return static_cast<std::size_t>(traffic_class_of(r)); }

struct Coefficients {
  std::vector<double> values;
  double weighted_residual = 0.0;
};

// Least squares of the weighted problem restricted to the columns in `mask`
// (columns scaled to unit norm); nullopt when some coefficient is negative.
// `rank` receives the effective rank of the restricted matrix.
std::optional<Coefficients> solve_subset(const FitProblem& p, unsigned mask, int* rank) {
  const int m = static_cast<int>(p.rows.size());
  const std::size_t k = p.rows.front().size();
  std::vector<std::size_t> columns;
  for (std::size_t j = 0; j < k; ++j) {
    if (mask & (1u << j)) columns.push_back(j);
  }
  const int n = static_cast<int>(columns.size());
  // Column-major A (m x n) of rows / time, b = 1 (relative residuals).
  std::vector<double> a(static_cast<std::size_t>(m) * n);
  std::vector<double> scale(n, 0.0);
  for (int c = 0; c < n; ++c) {
    for (int i = 0; i < m; ++i) {
      const double v = p.rows[i][columns[c]] / p.times_s[i];
      a[static_cast<std::size_t>(c) * m + i] = v;
      scale[c] += v * v;
    }
    scale[c] = std::sqrt(scale[c]);
    if (scale[c] == 0.0) scale[c] = 1.0;
    for (int i = 0; i < m; ++i) a[static_cast<std::size_t>(c) * m + i] /= scale[c];
  }
  const std::vector<double> a_copy = a;
  std::vector<double> b(std::max(m, n), 0.0);
  std::fill(b.begin(), b.begin() + m, 1.0);
  std::vector<double> singular(n);
  const int nrhs = 1;
  const double rcond = 1e-10;
  int info = 0;
  int lwork = -1;
  double work_size = 0.0;
  int iwork_size = 0;
  dgelsd_(&m, &n, &nrhs, a.data(), &m, b.data(), &m, singular.data(), &rcond, rank, &work_size, &lwork, &iwork_size,
          &info);
  if (info != 0) throw std::runtime_error(fmt::format("LAPACK dgelsd workspace query failed (info {})", info));
  lwork = static_cast<int>(work_size);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(static_cast<std::size_t>(std::max(1, iwork_size)));
  dgelsd_(&m, &n, &nrhs, a.data(), &m, b.data(), &m, singular.data(), &rcond, rank, work.data(), &lwork, iwork.data(),
          &info);
  if (info != 0) throw std::runtime_error(fmt::format("LAPACK dgelsd did not converge (info {})", info));

  Coefficients result;
  result.values.assign(k, 0.0);
  for (int c = 0; c < n; ++c) {
    const double value = b[c] / scale[c];
    if (value < 0.0) return std::nullopt;
    result.values[columns[c]] = value;
  }
  for (int i = 0; i < m; ++i) {
    double fitted = 0.0;
    for (int c = 0; c < n; ++c) fitted += a_copy[static_cast<std::size_t>(c) * m + i] * b[c];
    result.weighted_residual += (fitted - 1.0) * (fitted - 1.0);
  }
  return result;
}

// The fits of one calibration, collected over the files.
struct PointSet {
  FitProblem problem;
  std::vector<std::string> files;  // contributing files, in order, once each
  void add(std::vector<double> row, double time_s, const std::string& file) {
    problem.rows.push_back(std::move(row));
    problem.times_s.push_back(time_s);
    if (files.empty() || files.back() != file) files.push_back(file);
  }
  std::string where(std::string_view what) const { return fmt::format("{}: {}", fmt::join(files, ", "), what); }
};

// Layer rows: [(c+s)^2 - c^2 and s summed over the segments, 1, segments - 1].
// Without packed rows the last column is all 0 and leaves the fit: gamma is 0.
void drop_segment_column_unless_packed(FitProblem& problem) {
  for (const auto& row : problem.rows) {
    if (row[3] > 0.0) return;
  }
  for (auto& row : problem.rows) row.pop_back();
}

proto::ComputeFit compute_fit(const std::vector<double>& c) {
  proto::ComputeFit fit;
  fit.set_alpha1_s_per_token2(c[0]);
  fit.set_alpha2_s_per_token(c[1]);
  fit.set_beta_s(c[2]);
  if (c.size() > 3) fit.set_gamma_s_per_extra_segment(c[3]);
  return fit;
}

// A fit of `points` with its quality, where they are at least `least_points`
// (an optional kernel fit: the LM head's, the attention kernel's).
struct OptionalFit {
  std::vector<double> coefficients;
  proto::FitQuality quality;
};
std::optional<OptionalFit> fit_if_enough(const PointSet& points, std::size_t least_points, const std::string& what) {
  if (points.problem.rows.size() < least_points) return std::nullopt;
  std::vector<double> c = fit_non_negative(points.problem, points.where(what));
  proto::FitQuality quality = fit_quality(points.problem, c);
  return OptionalFit{std::move(c), std::move(quality)};
}

// InterferenceFit.by_size of a class: per size of its rows, the factor of
// beside = factor x alone by the same relative least squares as the class's
// one factor (one coefficient: factor = sum(x) / sum(x^2), x = alone / beside),
// and the quality of the rows against the factor of their size.
void fit_interference_by_size(const FitProblem& compute, const FitProblem& comm, std::span<const std::uint64_t> bytes,
                              proto::InterferenceFit& fit) {
  struct Sums {
    double compute_x = 0.0, compute_x2 = 0.0, comm_x = 0.0, comm_x2 = 0.0;
    std::uint32_t rows = 0;
  };
  std::map<std::uint64_t, Sums> by_size;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    Sums& s = by_size[bytes[i]];
    const double x = compute.rows[i][0] / compute.times_s[i], y = comm.rows[i][0] / comm.times_s[i];
    s.compute_x += x;
    s.compute_x2 += x * x;
    s.comm_x += y;
    s.comm_x2 += y * y;
    ++s.rows;
  }
  std::map<std::uint64_t, std::size_t> column;
  std::vector<double> compute_factors, comm_factors;
  for (const auto& [size, s] : by_size) {
    column[size] = compute_factors.size();
    compute_factors.push_back(s.compute_x / s.compute_x2);
    comm_factors.push_back(s.comm_x / s.comm_x2);
    auto* point = fit.add_by_size();
    point->set_bytes(size);
    point->set_compute_slowdown(compute_factors.back());
    point->set_comm_slowdown(comm_factors.back());
    point->set_rows(s.rows);
  }
  // Each row's alone time in its size's column: the factors are that problem's coefficients.
  for (auto [problem, factors, quality] :
       {std::tuple{&compute, &compute_factors, fit.mutable_compute_by_size_quality()},
        std::tuple{&comm, &comm_factors, fit.mutable_comm_by_size_quality()}}) {
    FitProblem sized;
    sized.times_s = problem->times_s;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      std::vector<double> row(factors->size(), 0.0);
      row[column[bytes[i]]] = problem->rows[i][0];
      sized.rows.push_back(std::move(row));
    }
    *quality = fit_quality(sized, *factors);
  }
}

}  // namespace

TrafficClass traffic_class_of(const proto::BenchResult& r) {
  if (r.op() == "send-recv") return TrafficClass::PointToPoint;
  return r.crosses_nodes() ? TrafficClass::InterNodeCollective : TrafficClass::IntraNodeCollective;
}

std::vector<double> layer_regressors(const proto::BenchResult& r) {
  const double n = r.has_segments() ? static_cast<double>(r.segments()) : 1.0;
  const auto terms = calibrated_fit_terms(static_cast<double>(r.tokens()), static_cast<double>(r.context_tokens()), n);
  return {terms.begin(), terms.end()};
}

proto::BenchFile read_bench_file(const std::filesystem::path& path) {
  const std::string file = path.string();
  proto::BenchFile bench;
  from_json(read_file(path), &bench, file);
  if (!bench.has_eppsim_bench()) fail(file, "eppsim_bench", "is missing (the format version, 1)");
  if (bench.eppsim_bench() != kBenchVersion)
    fail(file, "eppsim_bench", fmt::format("unknown format version {} (known: {})", bench.eppsim_bench(), kBenchVersion));
  if (!bench.has_kind()) fail(file, "kind", "is missing");
  if (!one_of(bench.kind(), {"compute", "comm", "interference"}))
    fail(file, "kind", fmt::format("unknown kind {} (known: compute, comm, interference)", quote_string(bench.kind())));
  if (!bench.has_backend()) fail(file, "backend", "is missing");
  if (!one_of(bench.backend(), {"cpu", "cuda"}))
    fail(file, "backend", fmt::format("unknown backend {} (known: cpu, cuda)", quote_string(bench.backend())));
  if (!bench.has_device() || bench.device().empty()) fail(file, "device", "is missing");
  if (bench.has_attention() && (bench.backend() != "cuda" || !one_of(bench.attention(), {"flash", "reference"}))) {
    fail(file, "attention", fmt::format("must be flash or reference, in a cuda file only; got {} in a {} file",
                                        quote_string(bench.attention()), bench.backend()));
  }
  if (!bench.has_ranks()) fail(file, "ranks", "is missing");
  if (bench.ranks() == 0) fail(file, "ranks", "must be >= 1, got 0");
  const bool compute = bench.kind() == "compute", comm = bench.kind() == "comm";
  if (!comm && !bench.has_model()) fail(file, "model", "is missing (compute and interference files name their model)");
  if (comm && bench.has_model()) fail(file, "model", "a comm file names no model");
  if (bench.results().empty()) fail(file, "results", "is empty");
  for (int i = 0; i < bench.results_size(); ++i) {
    const std::string row = fmt::format("results[{}]", i);
    if (compute) {
      check_compute_row(bench.results(i), file, row);
    } else if (comm) {
      check_comm_row(bench.results(i), file, row);
    } else {
      check_interference_row(bench.results(i), file, row);
    }
  }
  return bench;
}

std::vector<double> fit_non_negative(const FitProblem& problem, const std::string& where) {
  if (problem.rows.empty()) throw InputError(fmt::format("{}: no points to fit", where));
  const std::size_t k = problem.rows.front().size();
  if (problem.rows.size() <= k) {
    throw InputError(fmt::format("{}: {} points cannot fit {} coefficients and measure the fit; need at least {}", where,
                                 problem.rows.size(), k, k + 1));
  }
  const unsigned all = (1u << k) - 1;
  int rank = 0;
  std::optional<Coefficients> best = solve_subset(problem, all, &rank);
  if (rank < static_cast<int>(k)) {
    throw InputError(fmt::format("{}: the points do not determine the {} coefficients (rank {}); vary the sizes more",
                                 where, k, rank));
  }
  for (unsigned mask = 1; mask < all; ++mask) {
    int subset_rank = 0;
    auto candidate = solve_subset(problem, mask, &subset_rank);
    if (candidate && (!best || candidate->weighted_residual < best->weighted_residual)) best = std::move(candidate);
  }
  // The single-column subsets of positive rows always give a non-negative
  // coefficient, so some candidate exists.
  if (!best) throw std::logic_error(fmt::format("{}: no non-negative least-squares candidate", where));
  return best->values;
}

proto::FitQuality fit_quality(const FitProblem& problem, std::span<const double> coefficients) {
  const std::size_t m = problem.rows.size();
  double mean = 0.0;
  for (double t : problem.times_s) mean += t;
  mean /= static_cast<double>(m);
  double ss_res = 0.0, ss_tot = 0.0, sum_rel2 = 0.0, max_rel = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    double fitted = 0.0;
    for (std::size_t j = 0; j < coefficients.size(); ++j) fitted += coefficients[j] * problem.rows[i][j];
    const double t = problem.times_s[i];
    ss_res += (fitted - t) * (fitted - t);
    ss_tot += (t - mean) * (t - mean);
    const double rel = (fitted - t) / t;
    sum_rel2 += rel * rel;
    max_rel = std::max(max_rel, std::abs(rel));
  }
  proto::FitQuality q;
  q.set_points(static_cast<std::uint32_t>(m));
  q.set_r_squared(ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : (ss_res == 0.0 ? 1.0 : 0.0));
  q.set_max_relative_error(max_rel);
  q.set_rms_relative_error(std::sqrt(sum_rel2 / static_cast<double>(m)));
  return q;
}

proto::Calibration calibrate(std::span<const proto::BenchFile> files, std::span<const std::string> names) {
  if (files.empty()) throw InputError("calibrate: needs at least one BENCH.json");
  if (files.size() != names.size()) throw std::invalid_argument("calibrate: one name per file");
  proto::Calibration calibration;
  PointSet forward, backward, forward_attention, backward_attention;
  // The LM head's GEMM time per (file, backward?, tokens), summed over its GEMMs (backward: dgrad and wgrad).
  std::map<std::tuple<std::size_t, bool, std::uint64_t>, double> head_s;
  // (kind, group size, crosses nodes) -> points; ordered, so the fits come out in a fixed order.
  std::map<std::tuple<CommKind, std::uint32_t, bool>, PointSet> comm;
  // Per traffic class: compute beside = factor x compute alone, and the same of the comm; each row's bytes.
  PointSet compute_beside[kTrafficClasses], comm_beside[kTrafficClasses];
  std::vector<std::uint64_t> beside_bytes[kTrafficClasses];
  const proto::BenchFile* compute_file = nullptr;
  std::string compute_name;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const proto::BenchFile& bench = files[f];
    const std::string& name = names[f];
    auto* source = calibration.add_sources();
    source->set_file(name);
    source->set_kind(bench.kind());
    source->set_backend(bench.backend());
    source->set_device(bench.device());
    source->set_ranks(bench.ranks());
    if (bench.kind() == "compute") {
      if (compute_file == nullptr) {
        compute_file = &bench;
        compute_name = name;
        calibration.set_gpu(bench.device());
        calibration.set_model(bench.model().name());
      } else {
        if (!google::protobuf::util::MessageDifferencer::Equals(bench.model(), compute_file->model()))
          fail(name, "model", fmt::format("differs from {}'s: a calibration is for one model", compute_name));
        if (bench.device() != compute_file->device() || bench.backend() != compute_file->backend()) {
          fail(name, "device", fmt::format("{} ({}) differs from {}'s {} ({}): a calibration is for one device",
                                           bench.device(), bench.backend(), compute_name, compute_file->device(),
                                           compute_file->backend()));
        }
      }
      for (const auto& r : bench.results()) {
        const bool is_forward = r.pass() == "forward";
        if (r.kernel() == "layer") {
          (is_forward ? forward : backward).add(layer_regressors(r), r.time_s(), name);
        } else if (r.kernel() == "attention") {
          std::vector<double> row = layer_regressors(r);
          row.pop_back();  // one sequence: no gamma
          (is_forward ? forward_attention : backward_attention).add(std::move(row), r.time_s(), name);
        } else if (r.name().starts_with("lm_head") && r.has_tokens()) {
          head_s[{f, !is_forward, r.tokens()}] += r.time_s();
        }
      }
    } else if (bench.kind() == "interference") {
      for (const auto& r : bench.results()) {
        compute_beside[traffic_class(r)].add({r.compute_alone_s()}, r.compute_beside_s(), name);
        comm_beside[traffic_class(r)].add({r.comm_alone_s()}, r.comm_beside_s(), name);
        beside_bytes[traffic_class(r)].push_back(r.bytes());
      }
    } else {
      for (const auto& r : bench.results()) {
        const CommKind kind = *parse_comm_kind(r.op());
        const double x = bus_bytes(kind, r.group_size(), static_cast<double>(r.bytes()));
        comm[{kind, r.group_size(), r.crosses_nodes()}].add({1.0, x}, r.time_s(), name);
      }
    }
  }

  if (compute_file != nullptr) {
    for (auto [pass, points] : {std::pair{"forward", &forward}, std::pair{"backward", &backward}}) {
      const std::string where = points->files.empty()
                                    ? fmt::format("{}: results", compute_name)
                                    : points->where(fmt::format("results (kernel \"layer\", pass \"{}\")", pass));
      if (points->files.empty()) throw InputError(fmt::format("{}: no \"layer\" rows of pass \"{}\" to fit", where, pass));
      drop_segment_column_unless_packed(points->problem);
      const auto c = fit_non_negative(points->problem, where);
      const bool is_forward = std::string_view(pass) == "forward";
      *(is_forward ? calibration.mutable_forward() : calibration.mutable_backward()) = compute_fit(c);
      *(is_forward ? calibration.mutable_forward_quality() : calibration.mutable_backward_quality()) =
          fit_quality(points->problem, c);
    }
    // The optional kernel fits: 4 attention rows for alpha1, alpha2 and beta; 3 token counts of the head
    // ([s, 1]) for alpha2 and beta.
    PointSet forward_head, backward_head;
    for (const auto& [key, time_s] : head_s) {
      const auto& [file, is_backward, tokens] = key;
      (is_backward ? backward_head : forward_head).add({static_cast<double>(tokens), 1.0}, time_s, names[file]);
    }
    using C = proto::Calibration;
    for (auto [pass, attention, head, attention_fit, attention_quality, head_fit, head_quality] :
         {std::tuple{"forward", &forward_attention, &forward_head, &C::mutable_forward_attention,
                     &C::mutable_forward_attention_quality, &C::mutable_forward_head, &C::mutable_forward_head_quality},
          std::tuple{"backward", &backward_attention, &backward_head, &C::mutable_backward_attention,
                     &C::mutable_backward_attention_quality, &C::mutable_backward_head,
                     &C::mutable_backward_head_quality}}) {
      if (auto fit = fit_if_enough(*attention, 4, fmt::format("results (kernel \"attention\", pass \"{}\")", pass))) {
        *(calibration.*attention_fit)() = compute_fit(fit->coefficients);
        *(calibration.*attention_quality)() = fit->quality;
      }
      if (auto fit = fit_if_enough(*head, 3, fmt::format("results (kernel \"gemm\", name \"lm_head*\", pass \"{}\")", pass))) {
        proto::ComputeFit& h = *(calibration.*head_fit)();
        h.set_alpha2_s_per_token(fit->coefficients[0]);
        h.set_beta_s(fit->coefficients[1]);
        *(calibration.*head_quality)() = fit->quality;
      }
    }
  }
  for (const auto& [key, points] : comm) {
    const auto& [kind, group_size, crosses] = key;
    const std::string where = points.where(fmt::format("results (op \"{}\", group_size {}, crosses_nodes {})",
                                                       comm_kind_name(kind), group_size, crosses));
    const auto c = fit_non_negative(points.problem, where);
    // A bandwidth term below a billionth of the largest time is rounding, not a fit.
    double largest_bytes = 0.0, largest_time = 0.0;
    for (std::size_t i = 0; i < points.problem.rows.size(); ++i) {
      largest_bytes = std::max(largest_bytes, points.problem.rows[i][1]);
      largest_time = std::max(largest_time, points.problem.times_s[i]);
    }
    if (!(c[1] * largest_bytes > 1e-9 * largest_time))
      throw InputError(fmt::format("{}: the time does not grow with bytes, so no bandwidth can be fitted", where));
    auto* fit = calibration.add_collectives();
    fit->set_kind(std::string(comm_kind_name(kind)));
    fit->set_group_size(group_size);
    fit->set_crosses_nodes(crosses);
    fit->set_latency_s(c[0]);
    fit->set_bandwidth_bps(1.0 / c[1]);
    *fit->mutable_quality() = fit_quality(points.problem, c);
  }
  for (std::size_t t = 0; t < kTrafficClasses; ++t) {
    if (compute_beside[t].files.empty()) continue;
    auto* fit = calibration.add_interference();
    const std::string_view traffic = traffic_class_name(static_cast<TrafficClass>(t));
    fit->set_traffic(std::string(traffic));
    for (auto [what, points, factor, quality] :
         {std::tuple{"compute", &compute_beside[t], &proto::InterferenceFit::set_compute_slowdown,
                     fit->mutable_compute_quality()},
          std::tuple{"comm", &comm_beside[t], &proto::InterferenceFit::set_comm_slowdown, fit->mutable_comm_quality()}}) {
      const std::string where = points->where(fmt::format("results (interference of {} traffic, {}_beside_s)", traffic, what));
      const auto c = fit_non_negative(points->problem, where);
      (fit->*factor)(c[0]);
      *quality = fit_quality(points->problem, c);
    }
    fit_interference_by_size(compute_beside[t].problem, comm_beside[t].problem, beside_bytes[t], *fit);
  }
  return calibration;
}

proto::Calibration calibrate_files(std::span<const std::filesystem::path> paths) {
  std::vector<proto::BenchFile> files;
  std::vector<std::string> names;
  for (const auto& path : paths) {
    files.push_back(read_bench_file(path));
    names.push_back(path.string());
  }
  return calibrate(files, names);
}

std::string calibration_summary(const proto::Calibration& calibration) {
  std::string out;
  const auto quality = [](const proto::FitQuality& q) {
    return fmt::format("{} points, r^2 {:.4f}, max error {:.1f}%, rms {:.1f}%", q.points(), q.r_squared(),
                       100.0 * q.max_relative_error(), 100.0 * q.rms_relative_error());
  };
  if (calibration.has_forward()) {
    for (auto [pass, fit, q] : {std::tuple{"forward", &calibration.forward(), &calibration.forward_quality()},
                                std::tuple{"backward", &calibration.backward(), &calibration.backward_quality()}}) {
      out += fmt::format("  {:<9} alpha1 {:.4g} s/token^2, alpha2 {:.4g} s/token, beta {:.4g} s, gamma {:.4g} s/segment  ({})\n",
                         pass, fit->alpha1_s_per_token2(), fit->alpha2_s_per_token(), fit->beta_s(),
                         fit->gamma_s_per_extra_segment(), quality(*q));
    }
  }
  // The kernel fits, where fitted; the head's have no alpha1.
  using C = proto::Calibration;
  for (auto [what, fit, q, has, head] :
       {std::tuple{"forward attention", &C::forward_attention, &C::forward_attention_quality,
                   &C::has_forward_attention, false},
        std::tuple{"backward attention", &C::backward_attention, &C::backward_attention_quality,
                   &C::has_backward_attention, false},
        std::tuple{"forward LM head", &C::forward_head, &C::forward_head_quality, &C::has_forward_head, true},
        std::tuple{"backward LM head", &C::backward_head, &C::backward_head_quality, &C::has_backward_head, true}}) {
    if (!(calibration.*has)()) continue;
    const proto::ComputeFit& f = (calibration.*fit)();
    out += fmt::format("  {:<9} {}alpha2 {:.4g} s/token, beta {:.4g} s  ({})\n", what,
                       head ? "" : fmt::format("alpha1 {:.4g} s/token^2, ", f.alpha1_s_per_token2()),
                       f.alpha2_s_per_token(), f.beta_s(), quality((calibration.*q)()));
  }
  for (const auto& c : calibration.collectives()) {
    out += fmt::format("  {:<14} n={:<3} {:<11} latency {:.4g} s, busbw {:.4g} B/s  ({})\n", c.kind(), c.group_size(),
                       c.crosses_nodes() ? "inter-node" : "intra-node", c.latency_s(), c.bandwidth_bps(),
                       quality(c.quality()));
  }
  for (const auto& i : calibration.interference()) {
    out += fmt::format("  beside {:<22} compute x{:.3f} ({}), comm x{:.3f} ({})\n", i.traffic(), i.compute_slowdown(),
                       quality(i.compute_quality()), i.comm_slowdown(), quality(i.comm_quality()));
    if (i.by_size_size() == 0) continue;
    for (const auto& p : i.by_size()) {
      out += fmt::format("    at {:>10} B: compute x{:.3f}, comm x{:.3f} ({} rows)\n", p.bytes(),
                         p.compute_slowdown(), p.comm_slowdown(), p.rows());
    }
    out += fmt::format("    by size: compute rms {:.1f}%, comm rms {:.1f}%\n",
                       100.0 * i.compute_by_size_quality().rms_relative_error(),
                       100.0 * i.comm_by_size_quality().rms_relative_error());
  }
  return out;
}

}  // namespace eppsim
