#pragma once
// Bin packing of sequences, shared by planners.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace eppsim {

// Indices of the items in each bin.
using Bins = std::vector<std::vector<std::uint32_t>>;

// Best-fit decreasing: items sorted by size (largest first, ties by index), each
// placed in the fullest bin that still has room for it, or a new bin. An item
// larger than `capacity` gets a bin of its own. Deterministic.
Bins best_fit_decreasing(std::span<const std::uint64_t> sizes, std::uint64_t capacity);

// Longest-processing-time-first: items sorted by cost (largest first, ties by
// index), each to the currently least-loaded of `bins` bins (ties: lowest bin).
Bins longest_processing_time(std::span<const double> costs, std::uint32_t bins);

}  // namespace eppsim
