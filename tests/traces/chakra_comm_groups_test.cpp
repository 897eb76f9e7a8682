#include "traces/chakra/chakra_comm_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string error_of(std::string_view json, std::uint32_t ranks = 8) {
  try {
    parse_chakra_comm_groups(json, "g.json", ranks);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ChakraCommGroups, ParsesAstraSimsFormat) {
  const auto groups = parse_chakra_comm_groups(R"({"2": [4, 5, 6, 7], "1": [0, 1, 2, 3]})", "g.json", 8);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_THAT(groups.at(1), ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_THAT(groups.at(2), ElementsAre(4u, 5u, 6u, 7u));
}

TEST(ChakraCommGroups, FormatReadsBack) {
  const ChakraCommGroups groups = {{1, {0, 2}}, {10, {3, 1}}};
  const auto text = format_chakra_comm_groups(groups);
  EXPECT_EQ(text, "{\n  \"1\": [0, 2],\n  \"10\": [3, 1]\n}\n");
  EXPECT_EQ(parse_chakra_comm_groups(text, "g.json", 4), groups);
  EXPECT_EQ(chakra_comm_groups_path("out/t").string(), "out/t.comm_groups.json");
}

TEST(ChakraCommGroups, ErrorsNameTheFileTheGroupAndTheRule) {
  EXPECT_THAT(error_of("[1, 2]"), HasSubstr("g.json: not a JSON object"));
  EXPECT_THAT(error_of(R"({"a": [0]})"), HasSubstr("group \"a\": the key must be a non-negative integer"));
  EXPECT_THAT(error_of(R"({"1": 3})"), HasSubstr("group 1: must be an array of ranks"));
  EXPECT_THAT(error_of(R"({"1": [0, 8]})"), HasSubstr("group 1: every member must be a rank in [0, 8)"));
  EXPECT_THAT(error_of(R"({"1": [0, 1.5]})"), HasSubstr("every member must be a rank"));
  EXPECT_THAT(error_of(R"({"1": [2, 2]})"), HasSubstr("group 1: rank 2 listed twice"));
  EXPECT_THAT(error_of(R"({"1": []})"), HasSubstr("group 1: has no ranks"));
}

}  // namespace
}  // namespace eppsim
