#include "traces/chakra/chakra_attributes.h"

#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"

namespace eppsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ChakraAttributes, IntegersInAnyFormReadAsUnsignedOrSigned) {
  ChakraAttributes attrs;
  add_int32_attribute(&attrs, "a", 7);
  add_int64_attribute(&attrs, "b", 1 << 20);
  add_uint64_attribute(&attrs, "c", 5);
  attrs.Add()->set_name("d");
  attrs.Mutable(3)->set_sfixed64_val(-3);
  EXPECT_EQ(unsigned_attribute(attrs, "a", "n"), 7u);
  EXPECT_EQ(unsigned_attribute(attrs, "b", "n"), 1u << 20);
  EXPECT_EQ(unsigned_attribute(attrs, "c", "n"), 5u);
  EXPECT_EQ(signed_attribute(attrs, "d", "n"), -3);
  EXPECT_EQ(unsigned_attribute(attrs, "missing", "n"), std::nullopt);
  EXPECT_THAT(error_of([&] { unsigned_attribute(attrs, "d", "t.0.et: node 4"); }),
              HasSubstr("t.0.et: node 4: attribute d: must be >= 0, got -3"));
}

TEST(ChakraAttributes, WrongTypesAndOverflowAreErrors) {
  ChakraAttributes attrs;
  add_string_attribute(&attrs, "s", "x");
  add_uint64_attribute(&attrs, "big", ~std::uint64_t{0});
  add_bool_attribute(&attrs, "flag", true);
  EXPECT_THAT(error_of([&] { unsigned_attribute(attrs, "s", "n"); }), HasSubstr("n: attribute s: expected an integer"));
  EXPECT_THAT(error_of([&] { signed_attribute(attrs, "big", "n"); }), HasSubstr("does not fit a 64-bit signed integer"));
  EXPECT_THAT(error_of([&] { string_attribute(attrs, "flag", "n"); }), HasSubstr("expected a string"));
  EXPECT_EQ(unsigned_attribute(attrs, "big", "n"), ~std::uint64_t{0});
}

TEST(ChakraAttributes, ListsAndBytes) {
  ChakraAttributes attrs;
  add_string_list_attribute(&attrs, "names", {"a", "b"});
  add_uint64_list_attribute(&attrs, "values", {3, 4});
  add_bytes_attribute(&attrs, "raw", std::string("\0x", 2));
  EXPECT_THAT(*string_list_attribute(attrs, "names", "n"), ElementsAre("a", "b"));
  EXPECT_THAT(*unsigned_list_attribute(attrs, "values", "n"), ElementsAre(3u, 4u));
  EXPECT_EQ(bytes_attribute(attrs, "raw", "n"), std::string("\0x", 2));
  EXPECT_NE(find_attribute(attrs, "raw"), nullptr);
  EXPECT_THAT(error_of([&] { unsigned_list_attribute(attrs, "names", "n"); }), HasSubstr("expected an unsigned list"));
}

}  // namespace
}  // namespace eppsim
