// sim/html_report.h: where the plots folder is found, the paper.json beside a
// scenario, and a failing report script named in the error. (The page itself
// is tested end to end in Chromium: tests/plots/html_test.py.)
#include "sim/html_report.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace eppsim {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

class HtmlReport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("eppsim_html_report_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "plots");
  }
  void TearDown() override {
    unsetenv("EPPSIM_PLOTS_DIR");
    unsetenv("EPPSIM_PYTHON");
    fs::remove_all(dir_);
  }
  void touch(const fs::path& path) { std::ofstream(path) << "\n"; }
  fs::path dir_;
};

TEST_F(HtmlReport, FindsTheSourceTreesPlotsByDefault) {
  unsetenv("EPPSIM_PLOTS_DIR");
  // A test binary is not installed, so the compiled-in source tree's plots/ is found.
  EXPECT_EQ(plots_directory(), fs::path(EPPSIM_SOURCE_DIR) / "plots");
}

TEST_F(HtmlReport, EppsimPlotsDirOverridesAndMustHoldReportPy) {
  setenv("EPPSIM_PLOTS_DIR", (dir_ / "plots").c_str(), 1);
  try {
    plots_directory();
    FAIL() << "expected an error: no report.py";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr((dir_ / "plots").string()));
    EXPECT_THAT(e.what(), HasSubstr("EPPSIM_PLOTS_DIR"));
  }
  touch(dir_ / "plots" / "report.py");
  EXPECT_EQ(plots_directory(), dir_ / "plots");
}

TEST_F(HtmlReport, AFailingScriptIsNamedWithItsStatus) {
  touch(dir_ / "plots" / "report.py");
  setenv("EPPSIM_PLOTS_DIR", (dir_ / "plots").c_str(), 1);
  setenv("EPPSIM_PYTHON", "/bin/false", 1);
  try {
    write_html_report(dir_);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/bin/false -B"));
    EXPECT_THAT(e.what(), HasSubstr("report.py"));
    EXPECT_THAT(e.what(), HasSubstr("exit status 1"));
  }
}

TEST_F(HtmlReport, PaperJsonBesideAScenario) {
  touch(dir_ / "a.textproto");
  EXPECT_FALSE(paper_beside(dir_ / "a.textproto"));
  touch(dir_ / "paper.json");
  EXPECT_EQ(paper_beside(dir_ / "a.textproto"), dir_ / "paper.json");
  EXPECT_FALSE(paper_beside("<embedded quickstart>"));
}

}  // namespace
}  // namespace eppsim
