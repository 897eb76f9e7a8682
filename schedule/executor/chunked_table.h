#pragma once
// A table that grows by fixed chunks of huge pages instead of doubling: past
// its first chunk, what it holds is never copied or moved, and the pages it
// touches are those it fills. The executor core's channel table grows as it
// compiles the Schedule, to an unknown size: doubling a vector would copy it
// each time and touch about twice its final size in fresh pages, which the
// kernel must zero first.
#include <cstddef>
#include <utility>
#include <vector>

#include "schedule/executor/huge_page_allocator.h"

namespace eppsim {

template <typename T>
class ChunkedTable {
 public:
  // Entries a chunk: the fewest, a power of two, that fill whole huge pages.
  static constexpr int kChunkBits = [] {
    int bits = 0;
    while (((std::size_t{1} << bits) * sizeof(T)) % HugePageAllocator<T>::kHugePage != 0) ++bits;
    return bits;
  }();
  static constexpr std::size_t kChunk = std::size_t{1} << kChunkBits;

  void push_back(const T& value) {
    // The first chunk grows as a vector does (a small table stays small); the
    // others are reserved whole.
    if (size_ % kChunk == 0) {
      chunks_.emplace_back();
      if (size_ != 0) chunks_.back().reserve(kChunk);
    }
    chunks_.back().push_back(value);
    ++size_;
  }
  T& operator[](std::size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const T& operator[](std::size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void swap(ChunkedTable& other) noexcept {
    chunks_.swap(other.chunks_);
    std::swap(size_, other.size_);
  }

 private:
  std::vector<OpTable<T>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace eppsim
