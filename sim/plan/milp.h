#pragma once
// A small mixed-integer linear program and its solution by COIN-OR CBC.
//
// Minimise sum(cost_j * x_j) subject to lb_i <= sum_j a_ij x_j <= ub_i and
// lb_j <= x_j <= ub_j, some x_j integer. Deterministic: one thread, fixed seeds,
// no log output. A warm start (a full assignment of the columns) is checked for
// feasibility and, when feasible, given to CBC as its first incumbent; the best
// incumbent is returned when the time limit stops the search.
#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/schedule.pb.h"

namespace eppsim {

class Milp {
 public:
  static constexpr double kInfinity = std::numeric_limits<double>::infinity();

  // Returns the column index.
  int add_variable(double lb, double ub, double cost, bool integer);
  // coeffs: (column, coefficient) pairs; returns the row index.
  int add_row(std::vector<std::pair<int, double>> coeffs, double lb, double ub);

  int num_variables() const { return static_cast<int>(lb_.size()); }
  int num_rows() const { return static_cast<int>(rows_.size()); }

  // Whether `values` satisfies every bound, row and integrality within `tolerance`.
  bool feasible(const std::vector<double>& values, double tolerance = 1e-6) const;
  double objective(const std::vector<double>& values) const;

  enum class Status {
    Optimal,     // proven optimal (within the relative gap)
    Feasible,    // stopped (time or node limit) with an incumbent
    Infeasible,  // proven infeasible
    NoSolution,  // stopped without an incumbent
  };
  struct Result {
    Status status = Status::NoSolution;
    std::vector<double> values;  // empty unless Optimal or Feasible
    double objective = kInfinity;
    double bound = -kInfinity;   // best proven lower bound
    bool has_solution() const { return status == Status::Optimal || status == Status::Feasible; }
  };
  // time_limit_s > 0; relative_gap >= 0; warm_start empty or one value per column;
  // node_limit > 0 stops branch-and-bound after that many nodes (deterministic,
  // unlike the time limit), 0 means none. strong_branching = false branches on
  // pseudo-costs alone: much cheaper nodes for large, loose models.
  Result solve(double time_limit_s, double relative_gap, const std::vector<double>& warm_start = {},
               int node_limit = 0, bool strong_branching = true) const;

 private:
  struct Row {
    std::vector<std::pair<int, double>> coeffs;
    double lb = 0.0;
    double ub = 0.0;
  };
  std::vector<double> lb_, ub_, cost_;
  std::vector<bool> integer_;
  std::vector<Row> rows_;
};

// How a solve ended, for the schedule summary's decisions: Optimal and
// Feasible (stopped at a limit) give a solution; anything else falls back to
// the planner's heuristic.
// Its name: traces/plan_summary.h's solve_status_name.
proto::SolveStatus solve_status(Milp::Status status);

}  // namespace eppsim
