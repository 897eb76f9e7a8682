#include "scenario/field_locator.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "base/errors.h"
#include "proto/scenario.pb.h"
#include "base/text_parse.h"

namespace eppsim {
namespace {

// Line numbers below refer to this text.
constexpr std::string_view kText = R"(name: "t"
plan {
  zero_stage: 1
  epp { sp_degree: 3 slice_counts: 1 slice_counts: 0 }
}
)";

std::string failure(const FieldLocator& where, std::string_view path) {
  try {
    where.fail(path, "must be good, got bad");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "fail() returned";
  return {};
}

std::shared_ptr<const FieldLocator::ParseInfoTree> locations_of(std::string_view text) {
  auto tree = std::make_shared<FieldLocator::ParseInfoTree>();
  proto::Scenario scenario;
  EXPECT_FALSE(try_parse_text(text, &scenario, tree.get()).has_value());
  return tree;
}

TEST(FieldLocator, NamesFileLineFieldAndRule) {
  const FieldLocator where("s.textproto", locations_of(kText));
  EXPECT_EQ(where.source(), "s.textproto");
  EXPECT_EQ(failure(where, "plan.epp.sp_degree"), "s.textproto:4: plan.epp.sp_degree: must be good, got bad");
  EXPECT_EQ(failure(where, "plan.zero_stage"), "s.textproto:3: plan.zero_stage: must be good, got bad");
  // An element of a repeated field: the field's first line.
  EXPECT_EQ(failure(where, "plan.epp.slice_counts[1]"), "s.textproto:4: plan.epp.slice_counts[1]: must be good, got bad");
  // Not written: the nearest written ancestor; nothing written: no line.
  EXPECT_EQ(failure(where, "plan.flexsp.max_buckets"), "s.textproto:2: plan.flexsp.max_buckets: must be good, got bad");
  EXPECT_EQ(failure(where, "cluster.nodes"), "s.textproto: cluster.nodes: must be good, got bad");
}

TEST(FieldLocator, NamesTheOverrideThatSetTheField) {
  const FieldLocator where("s.textproto", locations_of(kText),
                           {{"plan.epp={sp_degree: 5}", "plan.epp"}, {"plan.epp.sp_degree=6", "plan.epp.sp_degree"}});
  // The last override covering the path wins; paths outside keep their line.
  EXPECT_EQ(failure(where, "plan.epp.sp_degree"),
            "s.textproto: plan.epp.sp_degree: must be good, got bad (set by --set plan.epp.sp_degree=6)");
  EXPECT_EQ(failure(where, "plan.epp.checkpoint_gap"),
            "s.textproto: plan.epp.checkpoint_gap: must be good, got bad (set by --set plan.epp={sp_degree: 5})");
  EXPECT_EQ(failure(where, "plan.epps"), "s.textproto:2: plan.epps: must be good, got bad");
  EXPECT_EQ(failure(where, "plan.zero_stage"), "s.textproto:3: plan.zero_stage: must be good, got bad");
}

TEST(FieldLocator, WithoutLocationsNoLine) {
  EXPECT_EQ(failure(FieldLocator("code"), "plan.epp.sp_degree"), "code: plan.epp.sp_degree: must be good, got bad");
}

TEST(FieldLocator, SplitsPathsAndQuotesStrings) {
  EXPECT_EQ(split_field_path("a.b.c"), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(split_field_path("a..b"), (std::vector<std::string_view>{"a", "", "b"}));
  EXPECT_EQ(quote_string("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
}

}  // namespace
}  // namespace eppsim
