#pragma once
// What the tests of sim/calibrate.h share: calibrating one bench file, the
// error it gives, a fresh folder per test, the error of reading a file.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/errors.h"
#include "sim/calibrate.h"

namespace eppsim::testing {

inline proto::Calibration calibrate_one(const proto::BenchFile& b, const std::string& name = "bench.json") {
  const std::vector<proto::BenchFile> files{b};
  const std::vector<std::string> names{name};
  return calibrate(files, names);
}

inline std::string error_of(const proto::BenchFile& b, const std::string& name = "bench.json") {
  try {
    calibrate_one(b, name);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = std::filesystem::path(::testing::TempDir()) / "eppsim_calibrate_tests" /
             (std::string(info->test_suite_name()) + "." + info->name() + "." + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_error(const std::filesystem::path& path) {
  try {
    read_bench_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace eppsim::testing
