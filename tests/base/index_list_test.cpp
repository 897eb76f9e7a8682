#include "base/index_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "base/errors.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string error_of(std::string_view list, std::uint32_t count) {
  try {
    parse_index_list(list, count, "--trace-ranks", "rank");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(IndexList, IndicesAndRangesAscendingAndOnce) {
  EXPECT_THAT(parse_index_list("7-9,0,3,8", 10, "--points", "point"), ElementsAre(0, 3, 7, 8, 9));
  EXPECT_THAT(parse_index_list("5", 6, "--points", "point"), ElementsAre(5));
}

TEST(IndexList, BadItemsNameTheOptionTheListAndTheRule) {
  EXPECT_EQ(error_of("0,,1", 4), "--trace-ranks 0,,1: '' is not a rank index (a list of rank indices and ranges: 0,3,7-9)");
  EXPECT_THAT(error_of("x", 4), HasSubstr("'x' is not a rank index"));
  EXPECT_THAT(error_of("-1", 4), HasSubstr("'' is not a rank index"));
  EXPECT_THAT(error_of("3-1", 4), HasSubstr("'3-1' runs backwards"));
  EXPECT_THAT(error_of("2-4", 4), HasSubstr("there are ranks 0 to 3"));
  EXPECT_THAT(error_of("1234567890", 4), HasSubstr("is not a rank index"));
  EXPECT_THAT(error_of("", 4), HasSubstr("'' is not a rank index"));
}

TEST(IndexList, FormatsRunsAsRangesAndReadsBack) {
  const std::vector<std::uint32_t> indices = {0, 3, 7, 8, 9, 11, 12};
  EXPECT_EQ(format_index_list(indices), "0,3,7-9,11-12");
  EXPECT_THAT(parse_index_list(format_index_list(indices), 13, "--points", "point"), ElementsAreArray(indices));
  EXPECT_EQ(format_index_list({}), "");
}

}  // namespace
}  // namespace eppsim
