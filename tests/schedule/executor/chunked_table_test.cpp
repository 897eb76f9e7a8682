#include "schedule/executor/chunked_table.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

struct Entry {
  std::uint64_t id;
  std::uint32_t rest[10];  // 48 bytes, as a channel is: a chunk is 3 huge pages
};

TEST(ChunkedTable, AChunkFillsWholeHugePages) {
  EXPECT_EQ(ChunkedTable<Entry>::kChunk * sizeof(Entry), 3 * HugePageAllocator<Entry>::kHugePage);
  EXPECT_EQ(ChunkedTable<std::uint32_t>::kChunk * sizeof(std::uint32_t), HugePageAllocator<std::uint32_t>::kHugePage);
}

// Past the first chunk (which grows as a vector does), entries keep their
// place as the table grows: what was written through a pointer is still there,
// and every index reads its own entry.
TEST(ChunkedTable, EntriesStayPutAsTheTableGrows) {
  ChunkedTable<Entry> table;
  EXPECT_TRUE(table.empty());
  const std::size_t entries = 2 * ChunkedTable<Entry>::kChunk + 5;
  for (std::uint64_t i = 0; i < entries; ++i) table.push_back(Entry{i, {}});
  ASSERT_EQ(table.size(), entries);
  const Entry* second_chunk = &table[ChunkedTable<Entry>::kChunk];
  for (std::uint64_t i = 0; i < 3; ++i) table.push_back(Entry{entries + i, {}});
  EXPECT_EQ(&table[ChunkedTable<Entry>::kChunk], second_chunk);
  table[ChunkedTable<Entry>::kChunk].rest[3] = 7;
  for (std::size_t i = 0; i < table.size(); ++i) ASSERT_EQ(table[i].id, i);
  EXPECT_EQ(second_chunk->rest[3], 7u);
  ChunkedTable<Entry>().swap(table);
  EXPECT_TRUE(table.empty());
}

}  // namespace
}  // namespace eppsim
