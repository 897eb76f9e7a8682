#include "base/progress.h"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace eppsim::progress {
namespace {

// What a ProgressLine wrote to a temporary file.
class ProgressOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = std::tmpfile();
    ASSERT_NE(file_, nullptr);
    was_enabled_ = enabled();
  }
  void TearDown() override {
    std::fclose(file_);
    set_enabled(was_enabled_);
  }
  std::string written() {
    std::fflush(file_);
    std::rewind(file_);
    std::string text;
    for (int c; (c = std::fgetc(file_)) != EOF;) text += static_cast<char>(c);
    return text;
  }
  Options immediate() const { return Options{.quiet_for_s = 0.0, .redraw_every_s = 0.0, .check_every = 1, .out = file_}; }

  std::FILE* file_ = nullptr;
  bool was_enabled_ = false;
};

TEST_F(ProgressOutput, QuietUnlessEnabled) {
  set_enabled(false);
  {
    ProgressLine line("simulating", immediate());
    int described = 0;
    for (int i = 0; i < 10; ++i) line.update([&] { ++described; return std::string("x"); });
    EXPECT_EQ(described, 0);  // not even formatted
    EXPECT_FALSE(line.drawn());
  }
  EXPECT_EQ(written(), "");
}

TEST_F(ProgressOutput, QuietForShortTasks) {
  set_enabled(true);
  {
    Options options = immediate();
    options.quiet_for_s = 3600.0;
    ProgressLine line("simulating", options);
    for (int i = 0; i < 100; ++i) line.update([] { return std::string("x"); });
    EXPECT_FALSE(line.drawn());
  }
  EXPECT_EQ(written(), "");
}

TEST_F(ProgressOutput, DrawsInPlaceAndErasesWhenDone) {
  set_enabled(true);
  {
    ProgressLine line("simulating", immediate());
    line.update([] { return std::string("1 of 2 ops"); });
    line.update([] { return std::string("2 of 2 ops"); });
    EXPECT_TRUE(line.drawn());
  }
  EXPECT_EQ(written(), "\r\033[Ksimulating: 1 of 2 ops\r\033[Ksimulating: 2 of 2 ops\r\033[K");
}

TEST_F(ProgressOutput, ReadsTheClockEveryCheckEveryUpdates) {
  set_enabled(true);
  Options options = immediate();
  options.check_every = 4;
  {
    ProgressLine line("planning", options);
    int described = 0;
    for (int i = 0; i < 10; ++i) line.update([&] { ++described; return std::to_string(i); });
    EXPECT_EQ(described, 2);  // updates 4 and 8
  }
  EXPECT_EQ(written(), "\r\033[Kplanning: 3\r\033[Kplanning: 7\r\033[K");
}

}  // namespace
}  // namespace eppsim::progress
