#include "models/topology/hamiltonian.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace eppsim {
namespace {

using Cycles = std::vector<std::vector<std::uint32_t>>;
using Matching = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

TEST(Hamiltonian, WaleckiK7MatchesTheWorkedExample) {
  const auto d = walecki_decomposition(7);
  EXPECT_EQ(d.cycles, (Cycles{{6, 0, 1, 5, 2, 4, 3}, {6, 1, 2, 0, 3, 5, 4}, {6, 2, 3, 1, 4, 0, 5}}));
  EXPECT_TRUE(d.matching.empty());
  EXPECT_EQ(verify_decomposition(7, d), "");
}

TEST(Hamiltonian, EvenK8MatchesTheWorkedExample) {
  const auto d = complete_graph_decomposition(8);
  EXPECT_EQ(d.cycles, (Cycles{{6, 0, 1, 5, 7, 2, 4, 3}, {6, 1, 2, 0, 7, 3, 5, 4}, {6, 2, 3, 1, 7, 4, 0, 5}}));
  EXPECT_EQ(d.matching, (Matching{{5, 2}, {0, 3}, {1, 4}, {7, 6}}));
  EXPECT_EQ(verify_decomposition(8, d), "");
}

TEST(Hamiltonian, EveryRowSizeFrom2To200Verifies) {
  for (std::uint32_t n = 2; n <= 200; ++n) {
    const auto d = complete_graph_decomposition(n);
    EXPECT_EQ(d.cycles.size(), (n - 1) / 2) << n;
    EXPECT_EQ(d.matching.size(), n % 2 == 0 ? n / 2 : 0u) << n;
    EXPECT_EQ(verify_decomposition(n, d), "") << "n = " << n;
  }
}

TEST(Hamiltonian, RailOfPairFormulaMatchesTheCycles) {
  for (std::uint32_t n = 3; n <= 81; n += 2) {
    const auto d = walecki_decomposition(n);
    const PairRailTable table(d);
    for (std::uint32_t a = 0; a < n; ++a) {
      for (std::uint32_t b = 0; b < n; ++b) {
        if (a == b) continue;
        ASSERT_EQ(walecki_rail(n, a, b), table.rail(a, b)) << "n=" << n << " a=" << a << " b=" << b;
      }
    }
  }
}

TEST(Hamiltonian, PairTableForEvenSizes) {
  for (std::uint32_t n = 4; n <= 64; n += 2) {
    const auto d = complete_graph_decomposition(n);
    const PairRailTable table(d);
    for (std::uint32_t a = 0; a < n; ++a) {
      for (std::uint32_t b = a + 1; b < n; ++b) {
        const std::uint32_t r = table.rail(a, b);
        ASSERT_LE(r, d.cycles.size());
        ASSERT_EQ(r, table.rail(b, a));
        if (r == d.cycles.size()) {
          bool in_matching = false;
          for (const auto& [x, y] : d.matching) in_matching |= (x == a && y == b) || (x == b && y == a);
          ASSERT_TRUE(in_matching) << n << ": " << a << "-" << b;
        }
      }
    }
  }
}

TEST(Hamiltonian, VerifyRejectsBrokenDecompositions) {
  auto d = walecki_decomposition(7);
  EXPECT_EQ(verify_decomposition(9, d), "the decomposition is of K_7, not K_9");

  auto short_cycle = d;
  short_cycle.cycles[1].pop_back();
  EXPECT_NE(verify_decomposition(7, short_cycle).find("cycle 1 has 6 vertices"), std::string::npos);

  auto repeated = d;
  repeated.cycles[2][3] = repeated.cycles[2][4];
  EXPECT_NE(verify_decomposition(7, repeated).find("not Hamiltonian"), std::string::npos);

  auto shared = d;
  shared.cycles[1] = shared.cycles[0];
  EXPECT_NE(verify_decomposition(7, shared).find("already in cycle 0"), std::string::npos);

  auto missing = d;
  missing.cycles.pop_back();
  EXPECT_NE(verify_decomposition(7, missing).find("needs 3 Hamiltonian cycles"), std::string::npos);

  auto even = complete_graph_decomposition(8);
  auto bad_matching = even;
  bad_matching.matching[0] = {5, 0};
  EXPECT_NE(verify_decomposition(8, bad_matching), "");
  auto no_matching = even;
  no_matching.matching.clear();
  EXPECT_NE(verify_decomposition(8, no_matching).find("perfect matching"), std::string::npos);

  // Two cycles swapping an edge each: still Hamiltonian, but overlapping.
  auto swapped = d;
  std::swap(swapped.cycles[0][1], swapped.cycles[0][2]);
  EXPECT_NE(verify_decomposition(7, swapped), "");
}

TEST(Hamiltonian, RejectsBadSizes) {
  EXPECT_THROW(walecki_decomposition(8), std::invalid_argument);
  EXPECT_THROW(walecki_decomposition(1), std::invalid_argument);
  EXPECT_THROW(complete_graph_decomposition(1), std::invalid_argument);
  EXPECT_EQ(verify_decomposition(2, complete_graph_decomposition(2)), "");
}

TEST(Hamiltonian, SquareToriSplitIntoTwoHamiltonianCycles) {
  for (std::uint32_t n = 3; n <= 24; ++n) {
    const auto cycles = torus_hamiltonian_decomposition(n, n);
    EXPECT_EQ(verify_torus_decomposition(n, n, cycles), "") << n;
  }
}

TEST(Hamiltonian, RectangularToriSplitIntoTwoHamiltonianCycles) {
  for (std::uint32_t m = 3; m <= 12; ++m) {
    for (std::uint32_t n = 3; n <= 12; ++n) {
      const auto cycles = torus_hamiltonian_decomposition(m, n);
      EXPECT_EQ(verify_torus_decomposition(m, n, cycles), "") << m << "x" << n;
    }
  }
}

TEST(Hamiltonian, TorusVerifyRejectsOverlaps) {
  auto cycles = torus_hamiltonian_decomposition(4, 4);
  cycles[1] = cycles[0];
  EXPECT_NE(verify_torus_decomposition(4, 4, cycles), "");
}

}  // namespace
}  // namespace eppsim
