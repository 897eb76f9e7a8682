#include "base/log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/errors.h"

namespace eppsim::logging {
namespace {

// Captures lines and restores the default rules and sink afterwards.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = set_sink([this](std::string_view line) { lines_.emplace_back(line); });
  }
  void TearDown() override {
    configure("");
    set_sink(std::move(previous_));
  }
  std::vector<std::string> lines_;

 private:
  Sink previous_;
};

TEST_F(LogTest, DefaultIsInfoForEveryCategory) {
  configure("");
  EXPECT_TRUE(enabled(Level::Error, "cli"));
  EXPECT_TRUE(enabled(Level::Warn, "plan.flexsp"));
  EXPECT_TRUE(enabled(Level::Info, "engine.analytic"));
  EXPECT_FALSE(enabled(Level::Debug, "cli"));
  info("cli", "wrote {}", "out/report.json");
  debug("cli", "not shown");
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], "[info cli] wrote out/report.json\n");
}

TEST_F(LogTest, APrefixCoversItsSubCategoriesOnly) {
  configure("plan:debug");
  EXPECT_TRUE(enabled(Level::Debug, "plan"));
  EXPECT_TRUE(enabled(Level::Debug, "plan.flexsp"));
  EXPECT_TRUE(enabled(Level::Debug, "plan.epp.checkpoint"));
  EXPECT_FALSE(enabled(Level::Debug, "planner"));  // not a sub-category
  EXPECT_FALSE(enabled(Level::Debug, "engine"));
  EXPECT_TRUE(enabled(Level::Info, "engine"));
}

TEST_F(LogTest, TheLongestMatchingRuleWins) {
  configure("plan:debug,plan.flexsp:warn,engine:error");
  EXPECT_TRUE(enabled(Level::Debug, "plan.epp"));
  EXPECT_FALSE(enabled(Level::Info, "plan.flexsp"));
  EXPECT_TRUE(enabled(Level::Warn, "plan.flexsp.milp"));
  EXPECT_FALSE(enabled(Level::Warn, "engine.analytic"));
  EXPECT_TRUE(enabled(Level::Error, "engine.analytic"));
  // The order of the rules does not matter.
  configure("plan.flexsp:warn, plan:debug");
  EXPECT_FALSE(enabled(Level::Info, "plan.flexsp"));
  EXPECT_TRUE(enabled(Level::Debug, "plan.epp"));
}

TEST_F(LogTest, ABareLevelSetsTheDefault) {
  configure("warn,cli:info");
  EXPECT_FALSE(enabled(Level::Info, "plan.epp"));
  EXPECT_TRUE(enabled(Level::Warn, "plan.epp"));
  EXPECT_TRUE(enabled(Level::Info, "cli"));
  configure("debug");
  EXPECT_TRUE(enabled(Level::Debug, "anything.at.all"));
  configure("error");
  warn("cli", "quiet");
  error("cli", "loud");
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], "[error cli] loud\n");
}

// A type whose formatting is counted: disabled messages must not format.
struct Counted {
  int* formatted;
};

}  // namespace
}  // namespace eppsim::logging

template <>
struct fmt::formatter<eppsim::logging::Counted> : fmt::formatter<int> {
  auto format(const eppsim::logging::Counted& c, fmt::format_context& ctx) const {
    return fmt::formatter<int>::format(++*c.formatted, ctx);
  }
};

namespace eppsim::logging {
namespace {

TEST_F(LogTest, DisabledMessagesAreNotFormatted) {
  configure("plan.flexsp:debug");
  int formatted = 0;
  debug("plan.epp", "{}", Counted{&formatted});
  EXPECT_EQ(formatted, 0);
  EXPECT_TRUE(lines_.empty());
  debug("plan.flexsp", "{}", Counted{&formatted});
  EXPECT_EQ(formatted, 1);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], "[debug plan.flexsp] 1\n");
}

TEST_F(LogTest, BadSpecsNameTheRule) {
  EXPECT_THROW(configure("plan.flexsp:verbose"), InputError);
  EXPECT_THROW(configure(":debug"), InputError);
  EXPECT_THROW(configure("plan:debug,,cli:info"), InputError);
  EXPECT_THROW(configure("loud"), InputError);
  try {
    configure("plan.flexsp:verbose");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown log level 'verbose'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--log 'plan.flexsp:verbose'"), std::string::npos) << e.what();
  }
  // A failed configure leaves the rules as they were.
  configure("cli:debug");
  EXPECT_THROW(configure("cli:info,x:nope"), InputError);
  EXPECT_TRUE(enabled(Level::Debug, "cli"));
}

TEST(LogLevel, NamesRoundTrip) {
  for (Level level : {Level::Error, Level::Warn, Level::Info, Level::Debug}) {
    EXPECT_EQ(parse_level(level_name(level)), level);
  }
}

}  // namespace
}  // namespace eppsim::logging
