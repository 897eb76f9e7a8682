#include "sim/calibration_check.h"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "models/comm_kind.h"
#include "models/interference.h"
#include "sim/calibrate.h"

namespace eppsim {

namespace {

// Each fit's predictions of the held-out rows, as a FitProblem of one column
// (the prediction) whose coefficient is 1.
class Scores {
 public:
  void add(const std::string& fit, double predicted_s, double measured_s) {
    auto [it, added] = index_.try_emplace(fit, problems_.size());
    if (added) problems_.emplace_back(fit, FitProblem{});
    FitProblem& p = problems_[it->second].second;
    p.rows.push_back({predicted_s});
    p.times_s.push_back(measured_s);
  }
  std::vector<HeldOutScore> scores() const {
    std::vector<HeldOutScore> out;
    const double one[] = {1.0};
    for (const auto& [fit, problem] : problems_) out.push_back({fit, fit_quality(problem, one)});
    return out;
  }

 private:
  std::map<std::string, std::size_t> index_;
  std::vector<std::pair<std::string, FitProblem>> problems_;
};

double layer_prediction_s(const proto::ComputeFit& fit, const proto::BenchResult& r) {
  const std::vector<double> x = layer_regressors(r);
  return fit.alpha1_s_per_token2() * x[0] + fit.alpha2_s_per_token() * x[1] + fit.beta_s() +
         fit.gamma_s_per_extra_segment() * x[3];
}

// Class `traffic`'s fit as the engines interpolate it, unclamped, at `bytes`.
InterferenceFactors fitted_factors(const proto::InterferenceFit& fit, TrafficClass traffic, double bytes) {
  Interference in;
  in.set_constant(traffic, {fit.compute_slowdown(), fit.comm_slowdown()});
  std::vector<InterferenceAtSize>& points = in.by_size[static_cast<std::size_t>(traffic)];
  if (fit.by_size_size() > 0) points.clear();
  for (const auto& p : fit.by_size()) {
    points.push_back({static_cast<double>(p.bytes()), {p.compute_slowdown(), p.comm_slowdown()}});
  }
  return in.at(traffic, bytes);
}

}  // namespace

HeldOutCheck check_held_out(const proto::Calibration& calibration, std::span<const proto::BenchFile> files) {
  HeldOutCheck check;
  Scores scores;
  // Layer rows, then comm rows, then interference rows: the scores come out in that order.
  std::vector<const proto::BenchResult*> layer, comm, interference;
  for (const auto& file : files) {
    for (const auto& r : file.results()) {
      if (file.kind() == "comm") {
        comm.push_back(&r);
      } else if (file.kind() == "interference") {
        interference.push_back(&r);
      } else if (r.kernel() == "layer") {
        layer.push_back(&r);
      } else {
        ++check.unscored_rows;  // attention and GEMM rows
      }
    }
  }
  for (const proto::BenchResult* r : layer) {
    const bool forward = r->pass() == "forward";
    if (forward ? !calibration.has_forward() : !calibration.has_backward()) {
      ++check.unscored_rows;
      continue;
    }
    scores.add(r->pass(), layer_prediction_s(forward ? calibration.forward() : calibration.backward(), *r), r->time_s());
  }
  for (const proto::BenchResult* r : comm) {
    const proto::CollectiveFit* fit = nullptr;
    for (const auto& c : calibration.collectives()) {
      if (c.kind() == r->op() && c.group_size() == r->group_size() && c.crosses_nodes() == r->crosses_nodes()) fit = &c;
    }
    if (fit == nullptr) {
      ++check.unscored_rows;
      continue;
    }
    const double bus = bus_bytes(*parse_comm_kind(r->op()), r->group_size(), static_cast<double>(r->bytes()));
    scores.add(fmt::format("{} n={} {}", fit->kind(), fit->group_size(), fit->crosses_nodes() ? "inter-node" : "intra-node"),
               fit->latency_s() + bus / fit->bandwidth_bps(), r->time_s());
  }
  for (const proto::BenchResult* r : interference) {
    const TrafficClass traffic = traffic_class_of(*r);
    const proto::InterferenceFit* fit = nullptr;
    for (const auto& f : calibration.interference()) {
      if (f.traffic() == traffic_class_name(traffic)) fit = &f;
    }
    if (fit == nullptr) {
      ++check.unscored_rows;
      continue;
    }
    const InterferenceFactors sized = fitted_factors(*fit, traffic, static_cast<double>(r->bytes()));
    const std::string beside = fmt::format("beside {}", fit->traffic());
    scores.add(beside + ", compute, one factor", fit->compute_slowdown() * r->compute_alone_s(), r->compute_beside_s());
    scores.add(beside + ", compute, by size", sized.compute_slowdown * r->compute_alone_s(), r->compute_beside_s());
    scores.add(beside + ", comm, one factor", fit->comm_slowdown() * r->comm_alone_s(), r->comm_beside_s());
    scores.add(beside + ", comm, by size", sized.comm_slowdown * r->comm_alone_s(), r->comm_beside_s());
  }
  check.scores = scores.scores();
  return check;
}

std::string held_out_summary(const HeldOutCheck& check) {
  std::string out = "  held out:\n";
  for (const auto& s : check.scores) {
    out += fmt::format("    {:<52} {} points, max error {:.1f}%, rms {:.1f}%\n", s.fit, s.quality.points(),
                       100.0 * s.quality.max_relative_error(), 100.0 * s.quality.rms_relative_error());
  }
  if (check.unscored_rows > 0) out += fmt::format("    ({} rows no fit covers, not scored)\n", check.unscored_rows);
  return out;
}

}  // namespace eppsim
