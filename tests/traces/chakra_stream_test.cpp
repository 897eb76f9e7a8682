#include "traces/chakra/chakra_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/traces/chakra_fixture.h"
#include "base/proto_io.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using namespace eppsim::testing;

std::string error_of(std::string_view bytes, const ChakraLimits& limits = {}) {
  try {
    parse_chakra_stream(bytes, "t.0.et", limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

ChakraRankTrace small_trace() {
  return chakra_rank({comp_node(0, 5), send_node(1, 1, 4096, 7, {0}), recv_node(2, 1, 4096, 8, {1})});
}

TEST(ChakraStream, RoundTripsMetadataAndNodesInOrder) {
  const auto trace = small_trace();
  const auto back = parse_chakra_stream(serialize_chakra_stream(trace), "t.0.et");
  EXPECT_EQ(back.metadata.version(), "0.0.4");
  ASSERT_EQ(back.nodes.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(back.nodes[i].SerializeAsString(), trace.nodes[i].SerializeAsString());
}

TEST(ChakraStream, TruncatedMessageNamesFileOffsetNodeAndRule) {
  const std::string bytes = serialize_chakra_stream(small_trace());
  const auto e = error_of(std::string_view(bytes).substr(0, bytes.size() - 1));
  EXPECT_THAT(e, HasSubstr("t.0.et: byte "));
  EXPECT_THAT(e, HasSubstr("node #2"));
  EXPECT_THAT(e, HasSubstr("runs past the end of the file"));
}

TEST(ChakraStream, MalformedLengthPrefixIsAnError) {
  const std::string bytes = serialize_chakra_stream(small_trace()) + "\xff\xff";
  EXPECT_THAT(error_of(bytes), HasSubstr("truncated or malformed length prefix"));
}

TEST(ChakraStream, CorruptMessageIsAnError) {
  // A length of 2 followed by a field with wire type 7 (no such type).
  const std::string bytes = serialize_chakra_stream(small_trace()) + std::string("\x02\x0f\x00", 3);
  EXPECT_THAT(error_of(bytes), HasSubstr("not a valid Node message"));
}

TEST(ChakraStream, LimitsOnMessageSizeAndNodeCount) {
  const std::string bytes = serialize_chakra_stream(small_trace());
  ChakraLimits small_messages;
  small_messages.max_message_bytes = 8;
  EXPECT_THAT(error_of(bytes, small_messages), HasSubstr("over the limit of 8 bytes"));
  ChakraLimits few_nodes;
  few_nodes.max_nodes = 2;
  EXPECT_THAT(error_of(bytes, few_nodes), HasSubstr("more than the limit of 2 nodes"));
  ChakraLimits small_file;
  small_file.max_file_bytes = 10;
  EXPECT_THAT(error_of(bytes, small_file), HasSubstr("more than the limit of 10 bytes"));
}

TEST(ChakraStream, EmptyFileIsAnError) { EXPECT_THAT(error_of(""), HasSubstr("empty")); }

TEST(ChakraStream, PrefixFilesAreFoundByRank) {
  const auto dir = std::filesystem::temp_directory_path() / "eppsim_chakra_stream_test";
  std::filesystem::remove_all(dir);
  const auto prefix = dir / "t";
  EXPECT_FALSE(is_chakra_prefix(prefix));
  write_chakra_prefix(prefix, {small_trace(), chakra_rank({comp_node(0, 1)})});
  EXPECT_TRUE(is_chakra_prefix(prefix));
  EXPECT_FALSE(is_chakra_prefix(chakra_rank_path(prefix, 0)));  // a file is not a prefix
  EXPECT_EQ(chakra_rank_path(prefix, 1).filename(), "t.1.et");
  const auto ranks = read_chakra_prefix(prefix);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].nodes.size(), 3u);
  EXPECT_EQ(ranks[1].nodes.size(), 1u);
  try {
    read_chakra_prefix(dir / "nope");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("nope.0.et does not exist"));
  }
  std::filesystem::remove_all(dir);
}

TEST(ChakraStream, ReadsAstraSimExampleTraces) {
  const auto dir = shared_chakra_dir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " is absent (../shared/data beside the checkout)";
  const auto all_reduce = read_chakra_prefix(dir / "all_reduce_8npus_1MB" / "all_reduce");
  ASSERT_EQ(all_reduce.size(), 8u);
  for (const auto& rank : all_reduce) {
    ASSERT_EQ(rank.nodes.size(), 1u);
    EXPECT_EQ(rank.nodes[0].type(), chakra::COMM_COLL_NODE);
    EXPECT_EQ(unsigned_attribute(rank.nodes[0].attr(), chakra_names::kCommSize, "n"), 1u << 20);
  }
  EXPECT_EQ(read_chakra_prefix(dir / "all_gather_16npus_1MB" / "all_gather").size(), 16u);
  const auto ring = read_chakra_prefix(dir / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce");
  ASSERT_EQ(ring.size(), 8u);
  EXPECT_EQ(ring[0].nodes.size(), 35u);
}

}  // namespace
}  // namespace eppsim
