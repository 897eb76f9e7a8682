#include "sim/plan/milp.h"

#include <cmath>
#include <stdexcept>

// CBC's headers are not warning-clean; they are included as system headers
// (target_include_directories SYSTEM in sim/CMakeLists.txt).
#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <CoinPackedVector.hpp>
#include <OsiClpSolverInterface.hpp>

namespace eppsim {

namespace {
double to_coin(double v) {
  if (v == Milp::kInfinity) return COIN_DBL_MAX;
  if (v == -Milp::kInfinity) return -COIN_DBL_MAX;
  return v;
}
}  // namespace

int Milp::add_variable(double lb, double ub, double cost, bool integer) {
  if (lb > ub) throw std::invalid_argument("Milp::add_variable: lb > ub");
  lb_.push_back(lb);
  ub_.push_back(ub);
  cost_.push_back(cost);
  integer_.push_back(integer);
  return num_variables() - 1;
}

int Milp::add_row(std::vector<std::pair<int, double>> coeffs, double lb, double ub) {
  for (const auto& [col, coef] : coeffs) {
    if (col < 0 || col >= num_variables()) throw std::invalid_argument("Milp::add_row: unknown column");
    (void)coef;
  }
  rows_.push_back(Row{std::move(coeffs), lb, ub});
  return num_rows() - 1;
}

bool Milp::feasible(const std::vector<double>& values, double tolerance) const {
  if (values.size() != lb_.size()) return false;
  for (std::size_t j = 0; j < values.size(); ++j) {
    if (values[j] < lb_[j] - tolerance || values[j] > ub_[j] + tolerance) return false;
    if (integer_[j] && std::abs(values[j] - std::round(values[j])) > tolerance) return false;
  }
  for (const auto& row : rows_) {
    double sum = 0.0;
    for (const auto& [col, coef] : row.coeffs) sum += coef * values[static_cast<std::size_t>(col)];
    const double scale = tolerance * std::max(1.0, std::abs(sum));
    if (sum < row.lb - scale || sum > row.ub + scale) return false;
  }
  return true;
}

double Milp::objective(const std::vector<double>& values) const {
  double sum = 0.0;
  for (std::size_t j = 0; j < values.size() && j < cost_.size(); ++j) sum += cost_[j] * values[j];
  return sum;
}

Milp::Result Milp::solve(double time_limit_s, double relative_gap, const std::vector<double>& warm_start,
                         int node_limit, bool strong_branching) const {
  const int n = num_variables();
  CoinPackedMatrix matrix(false, 0, 0);  // row-ordered
  matrix.setDimensions(0, n);
  std::vector<double> row_lb, row_ub;
  for (const auto& row : rows_) {
    CoinPackedVector vec;
    for (const auto& [col, coef] : row.coeffs) vec.insert(col, coef);
    matrix.appendRow(vec);
    row_lb.push_back(to_coin(row.lb));
    row_ub.push_back(to_coin(row.ub));
  }
  std::vector<double> col_lb(lb_.size()), col_ub(ub_.size());
  for (int j = 0; j < n; ++j) {
    col_lb[j] = to_coin(lb_[j]);
    col_ub[j] = to_coin(ub_[j]);
  }
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, col_lb.data(), col_ub.data(), cost_.data(), row_lb.data(), row_ub.data());
  for (int j = 0; j < n; ++j) {
    if (integer_[j]) solver.setInteger(j);
  }
  solver.setObjSense(1.0);

  CbcModel model(solver);
  model.setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.setNumberThreads(0);
  model.setRandomSeed(12345);
  model.solver()->setIntParam(OsiMaxNumIterationHotStart, 100);
  model.setMaximumSeconds(time_limit_s);
  if (node_limit > 0) model.setMaximumNodes(node_limit);
  if (!strong_branching) {
    model.setNumberStrong(0);
    model.setNumberBeforeTrust(0);
  }
  model.setAllowableFractionGap(relative_gap);
  model.setAllowableGap(0.0);

  Result result;
  double warm_objective = kInfinity;
  if (!warm_start.empty() && feasible(warm_start)) {
    warm_objective = objective(warm_start);
    model.setBestSolution(warm_start.data(), n, warm_objective, false);
  }
  model.branchAndBound();

  const double* best = model.bestSolution();
  if (best != nullptr && model.getSolutionCount() > 0) {
    result.values.assign(best, best + n);
    for (int j = 0; j < n; ++j) {
      if (integer_[j]) result.values[j] = std::round(result.values[j]);
    }
    result.objective = objective(result.values);
    if (!feasible(result.values, 1e-5)) result.values.clear();
  }
  if (result.values.empty() && warm_objective < kInfinity) {
    result.values = warm_start;
    result.objective = warm_objective;
  }
  if (!result.values.empty() && warm_objective < result.objective) {
    result.values = warm_start;
    result.objective = warm_objective;
  }
  result.bound = model.getBestPossibleObjValue();
  if (!result.values.empty()) {
    result.status = model.isProvenOptimal() ? Status::Optimal : Status::Feasible;
    if (result.bound > result.objective) result.bound = result.objective;
  } else {
    result.status = model.isProvenInfeasible() ? Status::Infeasible : Status::NoSolution;
  }
  return result;
}

proto::SolveStatus solve_status(Milp::Status status) {
  switch (status) {
    case Milp::Status::Optimal: return proto::SOLVE_OPTIMAL;
    case Milp::Status::Feasible: return proto::SOLVE_FEASIBLE_AT_LIMIT;
    case Milp::Status::Infeasible:
    case Milp::Status::NoSolution: return proto::SOLVE_FELL_BACK;
  }
  return proto::SOLVE_FELL_BACK;
}


}  // namespace eppsim
