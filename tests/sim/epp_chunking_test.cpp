#include "sim/plan/epp_chunking.h"

#include <algorithm>
#include <map>
#include <numeric>

#include <gtest/gtest.h>

#include "models/compute_cost.h"
#include "base/errors.h"
#include "base/rng.h"
#include "sim/plan/seq1f1b.h"

namespace eppsim {
namespace {

const TransformerSpec& model() { return *find_model_preset("llama2-7b"); }

// Forward FLOPs of a segment: a stand-in for the planner's time estimate that
// grows with context like attention does.
double flops_seconds(const Segment& s) {
  const std::array<Segment, 1> one{s};
  return chunk_flops(model(), Pass::Forward, ChunkWork{one, model().layers, false, false}).total() * 1e-15;
}

std::vector<std::uint64_t> batch(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::uint64_t> lengths;
  for (int i = 0; i < 96; ++i) {
    const double u = rng.uniform01();
    lengths.push_back(static_cast<std::uint64_t>(64.0 * std::pow(1024.0, u * u)));  // 64 .. 64K, long-tailed
  }
  lengths.push_back(65536);
  return lengths;
}

// Every token of every sequence lands once; a long sequence's slices are
// consecutive pieces with the right context, the last one its tail.
void check_conservation(const EppChunking& c, std::span<const std::uint64_t> lengths) {
  std::map<std::int64_t, std::uint64_t> long_covered;
  std::vector<int> short_seen(lengths.size(), 0);
  for (const auto& unit : c.units) {
    ASSERT_FALSE(unit.chunks.empty());
    for (std::size_t k = 0; k < unit.chunks.size(); ++k) {
      const auto& chunk = unit.chunks[k];
      std::size_t tails = 0;
      std::size_t first_short = 0;
      if (chunk.long_sequence >= 0) {
        const auto seq = chunk.long_sequence;
        EXPECT_EQ(chunk.segments[0].context_tokens, long_covered[seq]);
        long_covered[seq] += chunk.segments[0].tokens;
        tails += chunk.kind == EppChunkKind::Hybrid;
        first_short = 1;
        EXPECT_EQ(chunk.kind == EppChunkKind::Split, k + 1 < unit.chunks.size());
      } else {
        EXPECT_EQ(chunk.kind, EppChunkKind::Batched);
      }
      EXPECT_LE(tails, 1u);
      ASSERT_EQ(chunk.segments.size() - first_short, chunk.shorts.size());
      for (std::size_t i = 0; i < chunk.shorts.size(); ++i) {
        EXPECT_EQ(chunk.segments[first_short + i].tokens, lengths[chunk.shorts[i]]);
        EXPECT_EQ(chunk.segments[first_short + i].context_tokens, 0u);
        ++short_seen[chunk.shorts[i]];
      }
      EXPECT_EQ(chunk.prefix_tokens(), chunk.kind == EppChunkKind::Split ? chunk.tokens() : 0u);
    }
  }
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const bool is_long = long_covered.count(static_cast<std::int64_t>(i)) > 0;
    if (is_long) {
      EXPECT_EQ(long_covered[static_cast<std::int64_t>(i)], lengths[i]) << i;
      EXPECT_EQ(short_seen[i], 0) << i;
    } else {
      EXPECT_EQ(short_seen[i], 1) << i;
    }
  }
}

TEST(EppChunking, EveryTokenOnceAndOneTailPerChunk) {
  const auto lengths = batch(3);
  for (std::uint32_t k : {1u, 2u, 4u, 8u}) {
    const auto c = balanced_chunking(model(), lengths, k, flops_seconds);
    EXPECT_EQ(c.slices, k);
    check_conservation(c, lengths);
    const auto e = even_chunking(lengths, k, flops_seconds);
    check_conservation(e, lengths);
  }
}

TEST(EppChunking, TheLongestSequenceIsCutIntoItsKBalancedSlices) {
  const auto lengths = batch(5);
  const auto c = balanced_chunking(model(), lengths, 4, flops_seconds);
  const auto expected = balanced_slice_lengths(model(), 65536, 4);
  // Units come longest first: the first is the 64K sequence.
  ASSERT_EQ(c.units[0].chunks.size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(c.units[0].chunks[k].segments[0].tokens, expected[k]);
  EXPECT_EQ(c.token_cap, expected[0]);  // the first slice is the largest
  // Every split chunk costs about the time target (same mesh, same context).
  for (const auto& unit : c.units) {
    for (const auto& chunk : unit.chunks) {
      if (chunk.kind == EppChunkKind::Split) {
        EXPECT_LE(chunk.seconds, c.time_target_s * (1 + 1e-9));
      }
    }
  }
  // Short sequences are those within the first mesh boundary.
  for (const auto& unit : c.units) {
    for (const auto& chunk : unit.chunks) {
      for (auto i : chunk.shorts) EXPECT_LE(lengths[i], expected[0]);
    }
  }
}

TEST(EppChunking, PackingRespectsTheTokenCapAndBalancesTime) {
  const auto lengths = batch(11);
  const auto c = balanced_chunking(model(), lengths, 4, flops_seconds);
  double longest_bucket = 0.0;
  for (const auto& unit : c.units) {
    for (const auto& chunk : unit.chunks) {
      if (chunk.kind == EppChunkKind::Split) continue;
      const std::uint64_t tokens = chunk.tokens();
      EXPECT_LE(tokens, c.token_cap);  // shorts and tails are within the largest slice
      longest_bucket = std::max(longest_bucket, chunk.seconds);
    }
  }
  EXPECT_LE(longest_bucket, c.time_target_s * (1 + 1e-9));  // the loosened target bounds every bucket
  // With K = 1 nothing is split: one chunk per bucket of whole sequences.
  const auto whole = balanced_chunking(model(), lengths, 1, flops_seconds);
  for (const auto& unit : whole.units) {
    ASSERT_EQ(unit.chunks.size(), 1u);
    EXPECT_EQ(unit.chunks[0].kind, EppChunkKind::Batched);
  }
}

TEST(EppChunking, EvenSplitCutsEqualTokenPieces) {
  const std::vector<std::uint64_t> lengths = {1000, 250, 600, 90, 400};
  const auto c = even_chunking(lengths, 4, flops_seconds);  // piece = 250 tokens
  EXPECT_EQ(c.token_cap, 250u);
  for (const auto& unit : c.units) {
    for (const auto& chunk : unit.chunks) {
      EXPECT_LE(chunk.tokens(), 250u);
      if (chunk.kind == EppChunkKind::Split) {
        EXPECT_EQ(chunk.tokens(), 250u);
      }
    }
  }
  check_conservation(c, lengths);
}

TEST(EppChunking, RejectsBadInput) {
  const std::vector<std::uint64_t> lengths = {10, 0};
  EXPECT_THROW(balanced_chunking(model(), lengths, 2, flops_seconds), InputError);
  const std::vector<std::uint64_t> fine = {10, 20};
  EXPECT_THROW(balanced_chunking(model(), fine, 0, flops_seconds), InputError);
  EXPECT_TRUE(balanced_chunking(model(), std::vector<std::uint64_t>{}, 2, flops_seconds).units.empty());
}

}  // namespace
}  // namespace eppsim
