#include "schedule/executor/huge_page_allocator.h"

#include <cstdint>
#include <numeric>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

// Small tables come from the heap, large ones from their own mapping; both
// hold what is written and give it back whole as the vector grows and shrinks.
TEST(HugePageAllocator, SmallAndLargeTablesHoldTheirEntries) {
  for (const std::size_t entries : {std::size_t{16}, std::size_t{3} << 20}) {
    OpTable<std::uint64_t> table(entries);
    std::iota(table.begin(), table.end(), 0);
    table.push_back(entries);  // grows past the mapping: moved to a larger one
    ASSERT_EQ(table.size(), entries + 1);
    for (std::size_t i = 0; i <= entries; i += entries / 8) EXPECT_EQ(table[i], i) << entries;
    EXPECT_EQ(table.back(), entries);
    OpTable<std::uint64_t>().swap(table);
    EXPECT_TRUE(table.empty());
  }
}

TEST(HugePageAllocator, ALargeTableIsAlignedForItsType) {
  HugePageAllocator<double> allocator;
  const std::size_t n = HugePageAllocator<double>::kHugePage;  // 16 MiB of doubles
  double* p = allocator.allocate(n);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignof(double), 0u);
  p[0] = 1.0;
  p[n - 1] = 2.0;
  EXPECT_EQ(p[0] + p[n - 1], 3.0);
  allocator.deallocate(p, n);
}

}  // namespace
}  // namespace eppsim
