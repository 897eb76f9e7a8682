#pragma once
// The scenario-file fixture the scenario tests share: a base scenario whose line
// numbers the tests refer to, a text replacement, and a fixture that writes a
// scenario into a fresh folder and loads it (or returns its InputError).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/proto_io.h"
#include "scenario/scenario.h"
#include "tests/schedule/sample_messages.h"

namespace eppsim::testing {

// Line numbers below refer to this text.
inline constexpr std::string_view kBase = R"(name: "t"
seed: 7
model { preset: "llama2-7b" }
cluster {
  nodes: 2
  gpus_per_node: 8
  gpu { preset: "A100-80GB" }
  intra_node { bandwidth: "300GB/s" latency: "2us" }
  inter_node { bandwidth: "200Gbps" latency: "5us" }
}
workload {
  lengths { fixed: 4096 }
  global_batch: 32
  max_length: 8192
}
plan {
  zero_stage: 1
  packed_1f1b { pipeline_stages: 4 micro_batch_tokens: 8192 }
}
)";

inline std::string replaced(std::string_view text, std::string_view from, std::string_view to) {
  std::string out(text);
  const auto at = out.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) out.replace(at, from.size(), to);
  return out;
}

// Writes `text` as DIR/s.textproto and loads it.
class ScenarioFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = fresh_dir("scenario"); }

  std::filesystem::path write(std::string_view text, const std::string& name = "s.textproto") {
    const auto path = dir_ / name;
    write_file_atomically(path, text);
    return path;
  }
  ResolvedScenario load(std::string_view text, const std::vector<std::string>& overrides = {}) {
    return load_scenario(write(text), overrides);
  }
  // The InputError message of loading `text`.
  std::string error_of(std::string_view text, const std::vector<std::string>& overrides = {}) {
    const auto path = write(text);
    try {
      load_scenario(path, overrides);
    } catch (const InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no InputError for:\n" << text;
    return {};
  }
  // The same for resolving `part` only.
  std::string error_of_part(std::string_view text, ScenarioPart part) {
    const auto path = write(text);
    try {
      load_scenario(path, {}, part);
    } catch (const InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no InputError for:\n" << text;
    return {};
  }
  std::string file() const { return (dir_ / "s.textproto").string(); }

  std::filesystem::path dir_;
};


}  // namespace eppsim::testing
