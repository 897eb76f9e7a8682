#include "sim/plan/milp.h"

#include <cmath>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

TEST(Milp, Knapsack) {
  // max 10a + 13b + 7c + 8d s.t. 4a + 6b + 3c + 5d <= 10, binary: the optimum is a + b = 23.
  Milp m;
  const double value[] = {10, 13, 7, 8};
  const double weight[] = {4, 6, 3, 5};
  std::vector<std::pair<int, double>> row;
  for (int i = 0; i < 4; ++i) row.emplace_back(m.add_variable(0, 1, -value[i], true), weight[i]);
  m.add_row(row, -Milp::kInfinity, 10);
  const auto r = m.solve(5.0, 0.0);
  ASSERT_EQ(r.status, Milp::Status::Optimal);
  EXPECT_NEAR(r.objective, -23.0, 1e-6);
  EXPECT_NEAR(r.values[0], 1.0, 1e-6);
  EXPECT_NEAR(r.values[1], 1.0, 1e-6);
  EXPECT_TRUE(m.feasible(r.values));
}

TEST(Milp, AssignmentWithWarmStart) {
  // 3 workers x 3 jobs, minimise cost; optimum 1 + 2 + 2 = 5 (w0-j1, w1-j0, w2-j2).
  const double cost[3][3] = {{4, 1, 3}, {2, 5, 6}, {3, 4, 2}};
  Milp m;
  int x[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) x[i][j] = m.add_variable(0, 1, cost[i][j], true);
  for (int i = 0; i < 3; ++i) m.add_row({{x[i][0], 1}, {x[i][1], 1}, {x[i][2], 1}}, 1, 1);
  for (int j = 0; j < 3; ++j) m.add_row({{x[0][j], 1}, {x[1][j], 1}, {x[2][j], 1}}, 1, 1);
  // Warm start: the identity (4 + 5 + 2 = 11), feasible but not optimal.
  std::vector<double> warm(9, 0.0);
  for (int i = 0; i < 3; ++i) warm[static_cast<std::size_t>(x[i][i])] = 1.0;
  ASSERT_TRUE(m.feasible(warm));
  EXPECT_DOUBLE_EQ(m.objective(warm), 11.0);
  const auto r = m.solve(5.0, 0.0, warm);
  ASSERT_TRUE(r.has_solution());
  EXPECT_NEAR(r.objective, 5.0, 1e-6);
  EXPECT_NEAR(r.values[static_cast<std::size_t>(x[0][1])], 1.0, 1e-6);
  EXPECT_LE(r.bound, r.objective + 1e-6);
}

TEST(Milp, Infeasible) {
  Milp m;
  const int a = m.add_variable(0, 3, 1.0, true);
  m.add_row({{a, 2.0}}, 3.0, 3.0);  // 2a = 3 has no integer solution
  const auto r = m.solve(5.0, 0.0);
  EXPECT_FALSE(r.has_solution());
  EXPECT_EQ(r.status, Milp::Status::Infeasible);
}

TEST(Milp, InfeasibleWarmStartIsIgnored) {
  Milp m;
  const int a = m.add_variable(0, 10, 1.0, true);
  m.add_row({{a, 1.0}}, 4.0, Milp::kInfinity);
  const auto r = m.solve(5.0, 0.0, {2.0});
  ASSERT_TRUE(r.has_solution());
  EXPECT_NEAR(r.values[0], 4.0, 1e-6);
}

}  // namespace
}  // namespace eppsim
