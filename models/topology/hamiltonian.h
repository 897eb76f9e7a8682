#pragma once
// Hamiltonian decompositions for RailX rails (reference: railx.md §3).
//
// Complete graph K_n on vertices 0..n-1:
//   odd n = 2m+1: Walecki. Hub n-1, the others Z_2m on a circle; zigzag
//     v_0 = 0, v_k = (k+1)/2 for odd k, 2m - k/2 for even k; cycle
//     H_i = (hub, v_0+i, ..., v_{2m-1}+i) mod 2m, i = 0..m-1: m edge-disjoint
//     Hamiltonian cycles covering all m(2m+1) edges.
//   even n = 2m: Walecki of K_{2m-1} (hub 2m-2); each cycle holds exactly one
//     circle diameter {x, x+m-1}; vertex 2m-1 is spliced into it (x -> 2m-1 ->
//     x+m-1). The m-1 removed diameters plus {2m-1, 2m-2} are the perfect matching.
// A cycle is listed as its n vertices in order; it closes from the last back to
// the first.
//
// The rail (cycle index) of a pair in O(1): for odd n (railx.md §2.3) with hub
// h = n-1 and 2m = n-1: rail(a, b) = ((a + b) mod 2m) / 2 for a, b != h;
// rail(h, x) = x mod m. For even n: a PairRailTable (an n x n table per row
// size, never per chip pair).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace eppsim {

struct HamiltonianDecomposition {
  std::uint32_t n = 0;
  std::vector<std::vector<std::uint32_t>> cycles;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> matching;  // even n only: n/2 disjoint edges
};

// Walecki's m = (n-1)/2 cycles of K_n; n odd and >= 3 (std::invalid_argument otherwise).
HamiltonianDecomposition walecki_decomposition(std::uint32_t n);

// K_n for any n >= 2: Walecki for odd n; n/2 - 1 cycles plus a perfect
// matching for even n (n = 2: no cycle, the matching {0, 1}). n < 2:
// std::invalid_argument.
HamiltonianDecomposition complete_graph_decomposition(std::uint32_t n);

// Empty when `d` is an edge-disjoint decomposition of K_n into floor((n-1)/2)
// Hamiltonian cycles (plus, for even n, one perfect matching) covering every
// edge; otherwise a sentence saying what is wrong.
std::string verify_decomposition(std::uint32_t n, const HamiltonianDecomposition& d);

// The Walecki cycle holding edge {a, b} of K_n (n odd, a != b, both < n).
constexpr std::uint32_t walecki_rail(std::uint32_t n, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t hub = n - 1;
  const std::uint32_t two_m = n - 1;
  if (a == hub) return b % (two_m / 2);
  if (b == hub) return a % (two_m / 2);
  return ((a + b) % two_m) / 2;
}

// For each pair of K_n, the index of the cycle holding it, or cycles.size()
// for a matching edge.
class PairRailTable {
 public:
  PairRailTable() = default;
  explicit PairRailTable(const HamiltonianDecomposition& d);
  std::uint32_t n() const { return n_; }
  std::uint32_t rail(std::uint32_t a, std::uint32_t b) const { return table_[a * n_ + b]; }

 private:
  std::uint32_t n_ = 0;
  std::vector<std::uint16_t> table_;
};

// The 2D torus C_rows x C_cols (rows, cols >= 3; vertex r * cols + c) as two
// edge-disjoint Hamiltonian cycles, each listed as its rows*cols vertices
// (railx.md §3.4: square swaps on the diagonal, then greedy merging swaps with
// deterministic neutral moves). Throws std::runtime_error when the search
// fails (it succeeds for all sizes tested, 3..16 x 3..16).
std::vector<std::vector<std::uint32_t>> torus_hamiltonian_decomposition(std::uint32_t rows, std::uint32_t cols);
// Empty when `cycles` are two edge-disjoint Hamiltonian cycles covering every
// edge of C_rows x C_cols; otherwise what is wrong.
std::string verify_torus_decomposition(std::uint32_t rows, std::uint32_t cols,
                                       const std::vector<std::vector<std::uint32_t>>& cycles);

}  // namespace eppsim
