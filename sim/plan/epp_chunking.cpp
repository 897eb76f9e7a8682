#include "sim/plan/epp_chunking.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "base/errors.h"
#include "sim/plan/seq1f1b.h"

namespace eppsim {

std::uint64_t EppChunk::tokens() const {
  std::uint64_t t = 0;
  for (const auto& s : segments) t += s.tokens;
  return t;
}

std::size_t EppChunking::chunk_count() const {
  std::size_t n = 0;
  for (const auto& u : units) n += u.chunks.size();
  return n;
}

namespace {

struct Bucket {
  EppChunk chunk;
  std::uint64_t tokens = 0;
  double per_token() const { return tokens > 0 ? chunk.seconds / static_cast<double>(tokens) : 0.0; }
};

// Short sequence `index` of `tokens` tokens and `seconds` into buckets[*chosen],
// or into a new bucket when none was chosen.
void place_short(std::vector<Bucket>& buckets, std::optional<std::size_t> chosen, std::uint32_t index,
                 std::uint64_t tokens, double seconds) {
  if (!chosen) {
    buckets.emplace_back();
    chosen = buckets.size() - 1;
  }
  Bucket& b = buckets[*chosen];
  b.chunk.segments.push_back(Segment{tokens, 0});
  b.chunk.shorts.push_back(index);
  b.chunk.seconds += seconds;
  b.tokens += tokens;
}

// Long sequences cut into pieces; returns per long sequence its pieces, longest sequence first.
struct LongSequence {
  std::uint32_t index = 0;
  std::vector<std::uint64_t> pieces;
};

std::vector<std::uint32_t> by_length_descending(std::span<const std::uint64_t> lengths) {
  std::vector<std::uint32_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return lengths[a] > lengths[b]; });
  return order;
}

// The units: each long sequence's split chunks then its bucket (hybrid), then
// the batched buckets, costliest first.
EppChunking assemble(std::vector<LongSequence> longs, std::vector<Bucket> buckets, std::span<const std::uint64_t> lengths,
                     const SegmentSeconds& seconds) {
  EppChunking out;
  // buckets[i] for i < longs.size() are the long sequences' tail buckets, in order.
  for (std::size_t i = 0; i < longs.size(); ++i) {
    EppUnit unit;
    unit.longest_tokens = lengths[longs[i].index];
    std::uint64_t context = 0;
    for (std::size_t k = 0; k + 1 < longs[i].pieces.size(); ++k) {
      EppChunk chunk;
      chunk.kind = EppChunkKind::Split;
      chunk.segments.push_back(Segment{longs[i].pieces[k], context});
      chunk.long_sequence = longs[i].index;
      chunk.slice = static_cast<std::uint32_t>(k);
      chunk.seconds = seconds(chunk.segments.back());
      unit.chunks.push_back(std::move(chunk));
      context += longs[i].pieces[k];
    }
    EppChunk tail = std::move(buckets[i].chunk);
    tail.kind = EppChunkKind::Hybrid;
    unit.chunks.push_back(std::move(tail));
    out.units.push_back(std::move(unit));
  }
  std::vector<EppUnit> batched;
  for (std::size_t i = longs.size(); i < buckets.size(); ++i) {
    EppUnit unit;
    for (const auto& s : buckets[i].chunk.segments) unit.longest_tokens = std::max(unit.longest_tokens, s.tokens);
    unit.chunks.push_back(std::move(buckets[i].chunk));
    unit.chunks.back().kind = EppChunkKind::Batched;
    batched.push_back(std::move(unit));
  }
  std::stable_sort(batched.begin(), batched.end(),
                   [](const EppUnit& a, const EppUnit& b) { return a.chunks[0].seconds > b.chunks[0].seconds; });
  for (auto& u : batched) out.units.push_back(std::move(u));
  return out;
}

void check_lengths(std::span<const std::uint64_t> lengths, std::uint32_t slices) {
  if (slices == 0) throw InputError("epp chunking: the slice number K must be >= 1, got 0");
  for (auto len : lengths) {
    if (len == 0) throw InputError("epp chunking: a sequence has 0 tokens");
  }
}

}  // namespace

EppChunking balanced_chunking(const TransformerSpec& model, std::span<const std::uint64_t> lengths,
                              std::uint32_t slices, const SegmentSeconds& seconds) {
  check_lengths(lengths, slices);
  if (lengths.empty()) return EppChunking{slices, 0.0, 0, {}};
  const auto order = by_length_descending(lengths);
  const std::uint64_t longest = lengths[order[0]];

  // 1. The mesh from the longest sequence.
  const auto mesh_pieces = balanced_slice_lengths(model, longest, slices);
  std::vector<std::uint64_t> boundaries;  // cumulative ends of all but the last piece
  std::uint64_t at = 0;
  double time_target = 0.0;
  std::uint64_t token_cap = 0;
  for (std::size_t k = 0; k < mesh_pieces.size(); ++k) {
    time_target = std::max(time_target, seconds(Segment{mesh_pieces[k], at}));
    token_cap = std::max(token_cap, mesh_pieces[k]);
    at += mesh_pieces[k];
    if (k + 1 < mesh_pieces.size()) boundaries.push_back(at);
  }

  // 2. Long sequences cut at the mesh; short ones kept whole.
  std::vector<LongSequence> longs;
  std::vector<std::uint32_t> shorts;
  for (auto i : order) {
    const std::uint64_t len = lengths[i];
    if (boundaries.empty() || len <= boundaries.front()) {
      shorts.push_back(i);
      continue;
    }
    LongSequence ls{i, {}};
    std::uint64_t start = 0;
    for (auto b : boundaries) {
      if (b >= len) break;
      ls.pieces.push_back(b - start);
      start = b;
    }
    ls.pieces.push_back(len - start);
    longs.push_back(std::move(ls));
  }

  // 3. A bucket per tail slice, then best-fit of the short sequences.
  std::vector<Bucket> buckets;
  for (const auto& ls : longs) {
    Bucket b;
    const std::uint64_t context = lengths[ls.index] - ls.pieces.back();
    b.chunk.segments.push_back(Segment{ls.pieces.back(), context});
    b.chunk.long_sequence = ls.index;
    b.chunk.slice = static_cast<std::uint32_t>(ls.pieces.size() - 1);
    b.chunk.seconds = seconds(b.chunk.segments.back());
    b.tokens = ls.pieces.back();
    buckets.push_back(std::move(b));
  }
  std::vector<double> short_seconds(lengths.size(), 0.0);
  for (auto i : shorts) short_seconds[i] = seconds(Segment{lengths[i], 0});
  std::stable_sort(shorts.begin(), shorts.end(), [&](auto a, auto b) { return short_seconds[a] > short_seconds[b]; });
  for (auto i : shorts) {
    const std::uint64_t n = lengths[i];
    const double t = short_seconds[i];
    std::optional<std::size_t> chosen;
    std::uint64_t fewest = std::numeric_limits<std::uint64_t>::max();
    for (const auto& b : buckets) fewest = std::min(fewest, b.tokens);
    if (!buckets.empty() && fewest + n <= token_cap) {
      std::vector<std::size_t> sorted(buckets.size());
      std::iota(sorted.begin(), sorted.end(), std::size_t{0});
      std::stable_sort(sorted.begin(), sorted.end(),
                       [&](auto a, auto b) { return buckets[a].per_token() < buckets[b].per_token(); });
      for (auto k : sorted) {
        if (buckets[k].chunk.seconds + t <= time_target && buckets[k].tokens + n <= token_cap) {
          chosen = k;
          break;
        }
      }
      if (!chosen) {
        // Loosen the time target to the cheapest bucket with token room.
        double best = std::numeric_limits<double>::infinity();
        for (auto k : sorted) {
          if (buckets[k].tokens + n > token_cap) continue;
          if (buckets[k].chunk.seconds + t < best) {
            best = buckets[k].chunk.seconds + t;
            chosen = k;
          }
        }
        time_target = best;
      }
    }
    place_short(buckets, chosen, i, n, t);
  }
  EppChunking out = assemble(std::move(longs), std::move(buckets), lengths, seconds);
  out.slices = slices;
  out.time_target_s = time_target;
  out.token_cap = token_cap;
  return out;
}

EppChunking even_chunking(std::span<const std::uint64_t> lengths, std::uint32_t slices, const SegmentSeconds& seconds) {
  check_lengths(lengths, slices);
  if (lengths.empty()) return EppChunking{slices, 0.0, 0, {}};
  const auto order = by_length_descending(lengths);
  const std::uint64_t piece = (lengths[order[0]] + slices - 1) / slices;
  std::vector<LongSequence> longs;
  std::vector<std::uint32_t> shorts;
  for (auto i : order) {
    if (lengths[i] <= piece) {
      shorts.push_back(i);
      continue;
    }
    LongSequence ls{i, {}};
    for (std::uint64_t start = 0; start < lengths[i]; start += piece) ls.pieces.push_back(std::min(piece, lengths[i] - start));
    longs.push_back(std::move(ls));
  }
  std::vector<Bucket> buckets;
  for (const auto& ls : longs) {
    Bucket b;
    b.chunk.segments.push_back(Segment{ls.pieces.back(), lengths[ls.index] - ls.pieces.back()});
    b.chunk.long_sequence = ls.index;
    b.chunk.slice = static_cast<std::uint32_t>(ls.pieces.size() - 1);
    b.chunk.seconds = seconds(b.chunk.segments.back());
    b.tokens = ls.pieces.back();
    buckets.push_back(std::move(b));
  }
  // Fixed-length packing: best-fit decreasing by tokens (shorts are sorted by length already).
  for (auto i : shorts) {
    const std::uint64_t n = lengths[i];
    std::optional<std::size_t> chosen;
    for (std::size_t k = 0; k < buckets.size(); ++k) {
      if (buckets[k].tokens + n > piece) continue;
      if (!chosen || buckets[k].tokens > buckets[*chosen].tokens) chosen = k;
    }
    place_short(buckets, chosen, i, n, seconds(Segment{n, 0}));
  }
  EppChunking out = assemble(std::move(longs), std::move(buckets), lengths, seconds);
  out.slices = slices;
  out.token_cap = piece;
  for (const auto& u : out.units) {
    for (const auto& c : u.chunks) out.time_target_s = std::max(out.time_target_s, c.seconds);
  }
  return out;
}

}  // namespace eppsim
