#include "models/topology/hamiltonian.h"

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>

namespace eppsim {

HamiltonianDecomposition walecki_decomposition(std::uint32_t n) {
  if (n < 3 || n % 2 == 0) {
    throw std::invalid_argument(fmt::format("walecki_decomposition: n must be odd and >= 3, got {}", n));
  }
  const std::uint32_t two_m = n - 1;
  const std::uint32_t m = two_m / 2;
  const std::uint32_t hub = n - 1;
  std::vector<std::uint32_t> zigzag(two_m);
  for (std::uint32_t k = 0; k < two_m; ++k) zigzag[k] = k == 0 ? 0 : k % 2 == 1 ? (k + 1) / 2 : two_m - k / 2;
  HamiltonianDecomposition d;
  d.n = n;
  d.cycles.resize(m);
  for (std::uint32_t i = 0; i < m; ++i) {
    auto& cycle = d.cycles[i];
    cycle.reserve(n);
    cycle.push_back(hub);
    for (const auto v : zigzag) cycle.push_back((v + i) % two_m);
  }
  return d;
}

HamiltonianDecomposition complete_graph_decomposition(std::uint32_t n) {
  if (n < 2) throw std::invalid_argument(fmt::format("complete_graph_decomposition: n must be >= 2, got {}", n));
  if (n % 2 == 1) return walecki_decomposition(n);
  HamiltonianDecomposition d;
  d.n = n;
  if (n == 2) {
    d.matching.emplace_back(0, 1);
    return d;
  }
  const HamiltonianDecomposition odd = walecki_decomposition(n - 1);
  const std::uint32_t circle = n - 2;  // Z_circle, hub n-2
  const std::uint32_t half = circle / 2;
  const std::uint32_t extra = n - 1;
  for (const auto& cycle : odd.cycles) {
    // cycle[0] is the hub; circle edges are cycle[j]-cycle[j+1], j >= 1.
    std::uint32_t at = 0;
    std::uint32_t found = 0;
    for (std::uint32_t j = 1; j + 1 < cycle.size(); ++j) {
      const std::uint32_t a = cycle[j];
      const std::uint32_t b = cycle[j + 1];
      if ((a + half) % circle == b || (b + half) % circle == a) {
        at = j;
        ++found;
      }
    }
    if (found != 1) throw std::logic_error("complete_graph_decomposition: a Walecki cycle without exactly one diameter");
    std::vector<std::uint32_t> spliced(cycle.begin(), cycle.begin() + at + 1);
    spliced.push_back(extra);
    spliced.insert(spliced.end(), cycle.begin() + at + 1, cycle.end());
    d.matching.emplace_back(cycle[at], cycle[at + 1]);
    d.cycles.push_back(std::move(spliced));
  }
  d.matching.emplace_back(extra, n - 2);
  return d;
}

std::string verify_decomposition(std::uint32_t n, const HamiltonianDecomposition& d) {
  if (n < 2) return fmt::format("K_{} has no edge to decompose", n);
  if (d.n != n) return fmt::format("the decomposition is of K_{}, not K_{}", d.n, n);
  const std::size_t want_cycles = (n - 1) / 2;
  if (d.cycles.size() != want_cycles) {
    return fmt::format("K_{} needs {} Hamiltonian cycles, got {}", n, want_cycles, d.cycles.size());
  }
  const std::size_t want_matching = n % 2 == 0 ? n / 2 : 0;
  if (d.matching.size() != want_matching) {
    return fmt::format("K_{} needs a perfect matching of {} edges, got {}", n, want_matching, d.matching.size());
  }
  // owner[a * n + b]: 0 = unused, i + 1 = cycle i, cycles + 1 = matching.
  std::vector<std::uint32_t> owner(static_cast<std::size_t>(n) * n, 0);
  std::uint64_t edges = 0;
  auto use = [&](std::uint32_t a, std::uint32_t b, std::uint32_t who) -> std::string {
    if (a >= n || b >= n) return fmt::format("vertex {} out of range", a >= n ? a : b);
    if (a == b) return fmt::format("self-loop at {}", a);
    auto& slot = owner[static_cast<std::size_t>(std::min(a, b)) * n + std::max(a, b)];
    auto name = [&](std::uint32_t w) {
      return w <= d.cycles.size() ? fmt::format("cycle {}", w - 1) : std::string("the matching");
    };
    if (slot != 0) return fmt::format("edge {{{}, {}}} of {} is already in {}", a, b, name(who), name(slot));
    slot = who;
    ++edges;
    return "";
  };
  for (std::uint32_t i = 0; i < d.cycles.size(); ++i) {
    const auto& cycle = d.cycles[i];
    if (cycle.size() != n) return fmt::format("cycle {} has {} vertices, not {}", i, cycle.size(), n);
    std::vector<bool> seen(n, false);
    for (const auto v : cycle) {
      if (v >= n) return fmt::format("cycle {}: vertex {} out of range", i, v);
      if (seen[v]) return fmt::format("cycle {} is not Hamiltonian: vertex {} appears twice", i, v);
      seen[v] = true;
    }
    for (std::uint32_t j = 0; j < n; ++j) {
      const std::string err = use(cycle[j], cycle[(j + 1) % n], i + 1);
      if (!err.empty()) return err;
    }
  }
  std::vector<bool> matched(n, false);
  for (const auto& [a, b] : d.matching) {
    for (const auto v : {a, b}) {
      if (v < n && matched[v]) return fmt::format("the matching covers vertex {} twice", v);
      if (v < n) matched[v] = true;
    }
    const std::string err = use(a, b, static_cast<std::uint32_t>(d.cycles.size()) + 1);
    if (!err.empty()) return err;
  }
  const std::uint64_t all = static_cast<std::uint64_t>(n) * (n - 1) / 2;
  if (edges != all) return fmt::format("the parts cover {} of K_{}'s {} edges", edges, n, all);
  return "";
}

PairRailTable::PairRailTable(const HamiltonianDecomposition& d) : n_(d.n) {
  if (d.cycles.size() >= 0xffff) throw std::invalid_argument("PairRailTable: too many cycles");
  table_.assign(static_cast<std::size_t>(n_) * n_, 0xffff);
  for (std::uint32_t i = 0; i < d.cycles.size(); ++i) {
    const auto& c = d.cycles[i];
    for (std::size_t j = 0; j < c.size(); ++j) {
      const auto a = c[j];
      const auto b = c[(j + 1) % c.size()];
      table_[a * n_ + b] = table_[b * n_ + a] = static_cast<std::uint16_t>(i);
    }
  }
  const auto m = static_cast<std::uint16_t>(d.cycles.size());
  for (const auto& [a, b] : d.matching) table_[a * n_ + b] = table_[b * n_ + a] = m;
}

// ---------------------------------------------------------------------------
// 2D torus into two Hamiltonian cycles

namespace {

class TorusFactors {
 public:
  TorusFactors(std::uint32_t rows, std::uint32_t cols)
      : rows_(rows), cols_(cols), factor_(2 * static_cast<std::size_t>(rows) * cols), parent_(rows * cols) {
    for (std::size_t e = 0; e < factor_.size(); ++e) factor_[e] = static_cast<std::uint8_t>(e % 2);
  }
  std::size_t h(std::uint32_t r, std::uint32_t c) const { return 2 * (static_cast<std::size_t>(r % rows_) * cols_ + c % cols_); }
  std::size_t v(std::uint32_t r, std::uint32_t c) const { return h(r, c) + 1; }
  // The vertices an edge joins.
  std::pair<std::uint32_t, std::uint32_t> ends(std::size_t e) const {
    const auto cell = static_cast<std::uint32_t>(e / 2);
    const std::uint32_t r = cell / cols_;
    const std::uint32_t c = cell % cols_;
    if (e % 2 == 0) return {cell, r * cols_ + (c + 1) % cols_};
    return {cell, ((r + 1) % rows_) * cols_ + c};
  }
  bool can_swap(std::uint32_t r, std::uint32_t c) const {
    const auto h1 = factor_[h(r, c)], h2 = factor_[h(r + 1, c)];
    const auto v1 = factor_[v(r, c)], v2 = factor_[v(r, c + 1)];
    return h1 == h2 && v1 == v2 && h1 != v1;
  }
  void swap(std::uint32_t r, std::uint32_t c) {
    for (const auto e : {h(r, c), h(r + 1, c), v(r, c), v(r, c + 1)}) factor_[e] ^= 1;
  }
  std::uint32_t components(std::uint8_t f) {
    std::iota(parent_.begin(), parent_.end(), 0u);
    std::uint32_t count = rows_ * cols_;
    for (std::size_t e = 0; e < factor_.size(); ++e) {
      if (factor_[e] != f) continue;
      const auto [a, b] = ends(e);
      const std::uint32_t ra = find(a), rb = find(b);
      if (ra != rb) {
        parent_[ra] = rb;
        --count;
      }
    }
    return count;
  }
  std::vector<std::uint32_t> cycle(std::uint8_t f) const {
    const std::uint32_t n = rows_ * cols_;
    std::vector<std::vector<std::uint32_t>> adjacent(n);
    for (std::size_t e = 0; e < factor_.size(); ++e) {
      if (factor_[e] != f) continue;
      const auto [a, b] = ends(e);
      adjacent[a].push_back(b);
      adjacent[b].push_back(a);
    }
    std::vector<std::uint32_t> out{0};
    std::uint32_t prev = 0, at = adjacent[0][0];
    while (at != 0 && out.size() <= n) {
      out.push_back(at);
      const std::uint32_t next = adjacent[at][0] == prev ? adjacent[at][1] : adjacent[at][0];
      prev = at;
      at = next;
    }
    return out;
  }

 private:
  std::uint32_t find(std::uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  std::uint32_t rows_, cols_;
  std::vector<std::uint8_t> factor_;  // per edge: 0 or 1
  std::vector<std::uint32_t> parent_;
};

}  // namespace

std::vector<std::vector<std::uint32_t>> torus_hamiltonian_decomposition(std::uint32_t rows, std::uint32_t cols) {
  if (rows < 3 || cols < 3) {
    throw std::invalid_argument(fmt::format("torus_hamiltonian_decomposition: sizes must be >= 3, got {}x{}", rows, cols));
  }
  TorusFactors t(rows, cols);
  for (std::uint32_t k = 0; k + 1 < std::min(rows, cols); ++k) {
    if (t.can_swap(k, k)) t.swap(k, k);
  }
  std::uint32_t c0 = t.components(0), c1 = t.components(1);
  std::uint64_t rng = 0x5eed;
  const std::uint32_t cells = rows * cols;
  for (std::uint32_t round = 0; round < 200 * cells && (c0 > 1 || c1 > 1); ++round) {
    bool improved = false;
    for (std::uint32_t cell = 0; cell < cells && !improved; ++cell) {
      const std::uint32_t r = cell / cols, c = cell % cols;
      if (!t.can_swap(r, c)) continue;
      t.swap(r, c);
      const std::uint32_t n0 = t.components(0), n1 = t.components(1);
      if (n0 <= c0 && n1 <= c1 && n0 + n1 < c0 + c1) {
        c0 = n0;
        c1 = n1;
        improved = true;
      } else {
        t.swap(r, c);
      }
    }
    if (improved) continue;
    // Stuck: a neutral move (total cycle count not raised), chosen at random.
    for (std::uint32_t tries = 0; tries < 4 * cells; ++tries) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      const auto cell = static_cast<std::uint32_t>((rng >> 33) % cells);
      const std::uint32_t r = cell / cols, c = cell % cols;
      if (!t.can_swap(r, c)) continue;
      t.swap(r, c);
      const std::uint32_t n0 = t.components(0), n1 = t.components(1);
      if (n0 + n1 <= c0 + c1) {
        c0 = n0;
        c1 = n1;
        break;
      }
      t.swap(r, c);
    }
  }
  if (c0 != 1 || c1 != 1) {
    throw std::runtime_error(fmt::format("torus_hamiltonian_decomposition: no decomposition found for {}x{}", rows, cols));
  }
  std::vector<std::vector<std::uint32_t>> cycles{t.cycle(0), t.cycle(1)};
  const std::string err = verify_torus_decomposition(rows, cols, cycles);
  if (!err.empty()) throw std::logic_error("torus_hamiltonian_decomposition: " + err);
  return cycles;
}

std::string verify_torus_decomposition(std::uint32_t rows, std::uint32_t cols,
                                       const std::vector<std::vector<std::uint32_t>>& cycles) {
  if (rows < 3 || cols < 3) return fmt::format("sizes must be >= 3, got {}x{}", rows, cols);
  if (cycles.size() != 2) return fmt::format("need 2 cycles, got {}", cycles.size());
  const std::uint32_t n = rows * cols;
  // used[2 * cell + 0]: horizontal edge cell -> right; + 1: vertical edge cell -> down.
  std::vector<std::uint8_t> used(2 * static_cast<std::size_t>(n), 0);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& cycle = cycles[i];
    if (cycle.size() != n) return fmt::format("cycle {} has {} vertices, not {}", i, cycle.size(), n);
    std::vector<bool> seen(n, false);
    for (const auto v : cycle) {
      if (v >= n || seen[v]) return fmt::format("cycle {} is not Hamiltonian (vertex {})", i, v);
      seen[v] = true;
    }
    for (std::uint32_t j = 0; j < n; ++j) {
      const std::uint32_t a = cycle[j], b = cycle[(j + 1) % n];
      const std::uint32_t ra = a / cols, ca = a % cols, rb = b / cols, cb = b % cols;
      std::size_t e;
      if (ra == rb && cb == (ca + 1) % cols) e = 2 * static_cast<std::size_t>(a);
      else if (ra == rb && ca == (cb + 1) % cols) e = 2 * static_cast<std::size_t>(b);
      else if (ca == cb && rb == (ra + 1) % rows) e = 2 * static_cast<std::size_t>(a) + 1;
      else if (ca == cb && ra == (rb + 1) % rows) e = 2 * static_cast<std::size_t>(b) + 1;
      else return fmt::format("cycle {}: {} - {} is not a torus edge", i, a, b);
      if (used[e]) return fmt::format("cycle {}: edge {} - {} used twice", i, a, b);
      used[e] = 1;
    }
  }
  return "";  // 2n distinct edges of the 2n: all covered
}

}  // namespace eppsim
