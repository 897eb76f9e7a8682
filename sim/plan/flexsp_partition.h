#pragma once
// Contiguous partitions of a sorted list, the two dynamic programmes of
// FlexSP's planner (flexsp.h): the Sequence Blaster's split of the sorted batch
// into micro-batches, and the length buckets of its MILP.
#include <cstdint>
#include <span>
#include <vector>

namespace eppsim {

// Consecutive split of `sizes` (in order) into `parts` non-empty chunks
// minimising the largest chunk sum; returns the chunk sizes (counts). parts is
// clamped to [1, sizes.size()].
std::vector<std::uint32_t> split_consecutive(std::span<const std::uint64_t> sizes, std::uint32_t parts);

// Contiguous buckets of descending `lengths` (at most `max_buckets`) minimising
// the padding sum(bucket max - length); returns the bucket sizes (counts).
std::vector<std::uint32_t> bucket_lengths(std::span<const std::uint64_t> descending_lengths, std::uint32_t max_buckets);

}  // namespace eppsim
