#include "models/length_distribution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "base/errors.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using Table = std::vector<std::pair<double, double>>;

// ---- QuantileDistribution ----

TEST(QuantileDistribution, RejectsMalformedTables) {
  const auto rejects = [](const Table& t) {
    EXPECT_THROW(QuantileDistribution("t", t), std::invalid_argument);
  };
  rejects({});
  rejects({{0.0, 1}});
  rejects({{0.0, 1}, {0.6, 5}, {0.5, 6}, {1.0, 9}});  // probabilities fall
  rejects({{0.0, 1}, {0.5, 5}, {0.5, 6}, {1.0, 9}});  // probabilities repeat
  rejects({{0.0, 1}, {0.5, 7}, {0.7, 6}, {1.0, 9}});  // lengths fall
  rejects({{0.1, 1}, {1.0, 9}});                      // does not start at 0
  rejects({{0.0, 1}, {0.9, 9}});                      // does not end at 1
  rejects({{0.0, 0}, {1.0, 9}});                      // length 0 has no logarithm
  rejects({{0.0, -1}, {1.0, 9}});
  rejects({{0.0, 1}, {std::nan(""), 5}, {1.0, 9}});
  rejects({{0.0, 1}, {1.0, std::numeric_limits<double>::infinity()}});
}

TEST(QuantileDistribution, MessageNamesTheTableAndPoint) {
  try {
    QuantileDistribution("mine", {{0.0, 1}, {0.5, 7}, {0.7, 6}, {1.0, 9}});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'mine'"));
    EXPECT_THAT(e.what(), HasSubstr("point 2"));
  }
}

TEST(QuantileDistribution, InterpolatesLinearlyInLogLength) {
  const QuantileDistribution d("t", {{0.0, 1}, {0.5, 100}, {0.75, 100}, {1.0, 10000}});
  EXPECT_DOUBLE_EQ(d.quantile(0.0), 1.0);
  EXPECT_NEAR(d.quantile(0.25), 10.0, 1e-9);  // geometric midpoint
  EXPECT_DOUBLE_EQ(d.quantile(0.5), 100.0);
  EXPECT_DOUBLE_EQ(d.quantile(0.6), 100.0);  // flat segment
  EXPECT_NEAR(d.quantile(0.875), 1000.0, 1e-9);
  EXPECT_DOUBLE_EQ(d.quantile(1.0), 10000.0);
  EXPECT_THROW(d.quantile(-0.1), std::invalid_argument);
  EXPECT_THROW(d.quantile(1.1), std::invalid_argument);
  EXPECT_THROW(d.quantile(std::nan("")), std::invalid_argument);
  EXPECT_EQ(d.name(), "t");
}

TEST(QuantileDistribution, SamplesRoundAndStayAtLeastOne) {
  const QuantileDistribution tiny("tiny", {{0.0, 0.1}, {1.0, 0.4}});
  Rng rng(3);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(tiny.sample(rng), 1u);

  // Inverse CDF: the sample is the rounded quantile of the next uniform draw.
  const QuantileDistribution d("t", {{0.0, 1}, {1.0, 1e6}});
  Rng a(11), b(11);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(d.sample(a), static_cast<std::uint64_t>(std::max(1LL, std::llround(d.quantile(b.uniform01())))));
  }
}

// ---- The embedded Wikipedia table ----

TEST(EmbeddedWikipedia, TableHitsTheDocumentedPercentiles) {
  const QuantileDistribution d = embedded_distribution("wikipedia");
  EXPECT_EQ(d.name(), "wikipedia");
  EXPECT_DOUBLE_EQ(d.quantile(0.0), 1.0);
  EXPECT_DOUBLE_EQ(d.quantile(0.5), 347.0);
  EXPECT_DOUBLE_EQ(d.quantile(0.9), 2112.0);
  EXPECT_DOUBLE_EQ(d.quantile(0.99), 10921.0);
  EXPECT_DOUBLE_EQ(d.quantile(0.999), 37367.0);
  EXPECT_DOUBLE_EQ(d.quantile(1.0), 1823777.0);
}

TEST(EmbeddedLongtail, BinsAndMeanAsDocumented) {
  const QuantileDistribution d = embedded_distribution("longtail");
  EXPECT_EQ(d.name(), "longtail");
  EXPECT_DOUBLE_EQ(d.quantile(0.699), 2048.0);
  EXPECT_DOUBLE_EQ(d.quantile(0.954), 32768.0);
  EXPECT_DOUBLE_EQ(d.quantile(0.984), 65536.0);
  EXPECT_DOUBLE_EQ(d.quantile(1.0), 131072.0);
  // Log-uniform inside a bin: its geometric middle at its middle probability.
  EXPECT_NEAR(d.quantile((0.984 + 1.0) / 2), std::sqrt(65536.0 * 131072.0), 1e-6);
  Rng rng(7);
  double sum = 0.0, above_32k = 0.0;
  constexpr int kSamples = 400'000;
  for (int i = 0; i < kSamples; ++i) {
    const auto len = static_cast<double>(d.sample(rng));
    sum += len;
    above_32k += len > 32768.0;
  }
  EXPECT_NEAR(sum / kSamples, 5770.0, 120.0);
  EXPECT_NEAR(above_32k / kSamples, 0.046, 0.002);
}

std::uint64_t sorted_percentile(const std::vector<std::uint64_t>& sorted, double p) {
  return sorted[static_cast<std::size_t>(p * static_cast<double>(sorted.size()))];
}

TEST(EmbeddedWikipedia, SampledStatisticsMatchTheData) {
  const QuantileDistribution d = embedded_distribution("Wikipedia");
  Rng rng(20240601);
  constexpr std::size_t kSamples = 1'000'000;
  std::vector<std::uint64_t> samples(kSamples);
  for (auto& s : samples) s = d.sample(rng);
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / kSamples;
  std::sort(samples.begin(), samples.end());
  // Documented: median 347, p90 2,112, p99 10,921, mean 1,014 (../shared/data/README.md).
  EXPECT_NEAR(static_cast<double>(sorted_percentile(samples, 0.5)), 347.0, 347.0 * 0.01);
  EXPECT_NEAR(static_cast<double>(sorted_percentile(samples, 0.9)), 2112.0, 2112.0 * 0.01);
  EXPECT_NEAR(static_cast<double>(sorted_percentile(samples, 0.99)), 10921.0, 10921.0 * 0.02);
  EXPECT_NEAR(mean, 1014.0, 1014.0 * 0.02);
  EXPECT_GE(samples.front(), 1u);
  EXPECT_LE(samples.back(), 1823777u);
}

TEST(EmbeddedWikipedia, UnknownNameListsTheKnownOnes) {
  try {
    embedded_distribution("github");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'github'"));
    EXPECT_THAT(e.what(), HasSubstr("wikipedia"));
  }
}

// The table against the raw lengths it was made from (../shared/data, when present).
TEST(EmbeddedWikipedia, AgreesWithTheRawData) {
  const std::filesystem::path raw = std::filesystem::path(EPPSIM_SHARED_DATA_DIR) / "wikipedia_lengths.txt";
  if (!std::filesystem::exists(raw)) GTEST_SKIP() << raw << " is absent (../shared/data beside the checkout)";
  std::vector<std::uint64_t> lengths = load_lengths_file(raw);
  ASSERT_EQ(lengths.size(), 1'000'000u);
  const double mean = std::accumulate(lengths.begin(), lengths.end(), 0.0) / lengths.size();
  EXPECT_NEAR(mean, 1013.6, 0.05);
  std::sort(lengths.begin(), lengths.end());
  const QuantileDistribution d = embedded_distribution("wikipedia");
  for (const int k : {0, 1000, 250000, 500000, 900000, 990000, 999000, 999900, 999990, 999999}) {
    const double p = k / 1e6;
    EXPECT_DOUBLE_EQ(d.quantile(p), static_cast<double>(lengths[k])) << "p = " << p;
  }
  EXPECT_DOUBLE_EQ(d.quantile(1.0), static_cast<double>(lengths.back()));
}

// ---- EmpiricalListDistribution and FixedLengthDistribution ----

TEST(LogNormalDistribution, HitsItsMedianSpreadAndMean) {
  const LogNormalDistribution dist(2048.0, 1.5);
  Rng rng(7);
  std::vector<double> logs;
  double sum = 0.0;
  for (int i = 0; i < 200000; ++i) {
    const auto length = dist.sample(rng);
    logs.push_back(std::log(static_cast<double>(length)));
    sum += static_cast<double>(length);
  }
  std::sort(logs.begin(), logs.end());
  EXPECT_NEAR(std::exp(logs[logs.size() / 2]), 2048.0, 2048.0 * 0.02);
  // ln(length) is normal with sigma 1.5: its 84th percentile sits one sigma above the median.
  EXPECT_NEAR(logs[static_cast<std::size_t>(0.8413 * logs.size())] - logs[logs.size() / 2], 1.5, 0.02);
  EXPECT_NEAR(sum / 200000.0, 2048.0 * std::exp(1.5 * 1.5 / 2.0), 2048.0 * std::exp(1.125) * 0.03);
}

TEST(LogNormalDistribution, SigmaZeroIsTheMedianAndBadParametersAreRefused) {
  Rng rng(1);
  const LogNormalDistribution fixed(1000.0, 0.0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(fixed.sample(rng), 1000u);
  const LogNormalDistribution wide(1.0, 4.0);  // draws far below 1 token round up to 1, none past 2^62
  for (int i = 0; i < 10000; ++i) {
    const auto length = wide.sample(rng);
    EXPECT_GE(length, 1u);
    EXPECT_LE(length, std::uint64_t{1} << 62);
  }
  EXPECT_THROW(LogNormalDistribution(0.0, 1.0), std::invalid_argument);
  EXPECT_THROW(LogNormalDistribution(100.0, -1.0), std::invalid_argument);
  EXPECT_THROW(LogNormalDistribution(100.0, std::numeric_limits<double>::infinity()), std::invalid_argument);
}

TEST(EmpiricalListDistribution, DrawsUniformlyFromTheList) {
  const EmpiricalListDistribution d("list", {5, 17, 99});
  EXPECT_EQ(d.name(), "list");
  Rng rng(8);
  std::map<std::uint64_t, int> counts;
  for (int i = 0; i < 30000; ++i) ++counts[d.sample(rng)];
  ASSERT_EQ(counts.size(), 3u);
  for (const auto& [length, count] : counts) {
    EXPECT_TRUE(length == 5 || length == 17 || length == 99);
    EXPECT_NEAR(count, 10000, 500);
  }
}

TEST(EmpiricalListDistribution, RejectsEmptyAndZero) {
  EXPECT_THROW(EmpiricalListDistribution("e", {}), std::invalid_argument);
  EXPECT_THROW(EmpiricalListDistribution("e", {4, 0}), std::invalid_argument);
}

TEST(FixedLengthDistribution, AlwaysTheSame) {
  const FixedLengthDistribution d(4096);
  Rng rng(1);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(d.sample(rng), 4096u);
  EXPECT_EQ(d.name(), "fixed:4096");
  EXPECT_THROW(FixedLengthDistribution(0), std::invalid_argument);
}

// ---- load_lengths_file ----

class LengthsFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& contents) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }
  std::string error_of(const std::filesystem::path& path, std::string_view field = "length") {
    try {
      load_lengths_file(path, field);
    } catch (const InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << path << " was accepted";
    return "";
  }
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) / (std::string("eppsim_lengths_") + info->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

TEST_F(LengthsFile, PlainIntegersWithBlanksAndComments) {
  const auto path = write("lengths.txt", "# lengths of a test\n\n128\n  4096  \r\n7 # trailing comment\n\t\n1\n");
  EXPECT_EQ(load_lengths_file(path), (std::vector<std::uint64_t>{128, 4096, 7, 1}));
}

TEST_F(LengthsFile, LastLineWithoutNewline) {
  EXPECT_EQ(load_lengths_file(write("l.txt", "3\n5")), (std::vector<std::uint64_t>{3, 5}));
}

TEST_F(LengthsFile, BadLineNamesFileLineAndText) {
  std::string contents;
  for (int i = 1; i <= 16; ++i) contents += "100\n";
  contents += "abc\n";
  const auto path = write("lengths.txt", contents);
  EXPECT_EQ(error_of(path), path.string() + ":17: expected a positive integer length, got 'abc'");
}

TEST_F(LengthsFile, RejectsNonPositiveAndNonIntegerLengths) {
  for (const std::string bad : {"0", "-5", "12.5", "1e3", "+7", "12 13", "99999999999999999999999", "0x10"}) {
    EXPECT_THAT(error_of(write("l.txt", "10\n" + bad + "\n")),
                HasSubstr(":2: expected a positive integer length, got '" + bad + "'"));
  }
}

TEST_F(LengthsFile, EmptyFileIsAnError) {
  EXPECT_THAT(error_of(write("empty.txt", "")), HasSubstr("no lengths found"));
  EXPECT_THAT(error_of(write("comments.txt", "# nothing\n\n")), HasSubstr("no lengths found"));
}

TEST_F(LengthsFile, MissingFileIsAnError) {
  EXPECT_THAT(error_of(dir_ / "does-not-exist.txt"), HasSubstr("cannot open"));
}

TEST_F(LengthsFile, JsonlIsDetectedFromTheFirstLine) {
  const auto path = write("data.jsonl",
                          "{\"length\": 512, \"source\": \"a\"}\n"
                          "\n"
                          "{\"source\": \"b\", \"meta\": {\"x\": [1, 2]}, \"length\": 4096}\n"
                          "  {\"length\":7}  \n");
  EXPECT_EQ(load_lengths_file(path), (std::vector<std::uint64_t>{512, 4096, 7}));
}

TEST_F(LengthsFile, JsonlWithAnotherField) {
  const auto path = write("data.jsonl", "{\"tokens\": 300}\n{\"tokens\": 301, \"length\": 5}\n");
  EXPECT_EQ(load_lengths_file(path, "tokens"), (std::vector<std::uint64_t>{300, 301}));
  EXPECT_THAT(error_of(path, "length"), HasSubstr(":1: missing field 'length'"));
}

TEST_F(LengthsFile, JsonlErrorsNameTheLine) {
  const auto with_second_line = [&](const std::string& line) {
    return error_of(write("d.jsonl", "{\"length\": 10}\n" + line + "\n"));
  };
  EXPECT_THAT(with_second_line("{\"size\": 10}"), HasSubstr(":2: missing field 'length'"));
  EXPECT_THAT(with_second_line("{\"length\": 12.5}"),
              HasSubstr(":2: field 'length': expected a positive integer length, got '12.5'"));
  EXPECT_THAT(with_second_line("{\"length\": 0}"), HasSubstr("got '0'"));
  EXPECT_THAT(with_second_line("{\"length\": -3}"), HasSubstr("got '-3'"));
  EXPECT_THAT(with_second_line("{\"length\": \"abc\"}"), HasSubstr("got 'abc'"));
  EXPECT_THAT(with_second_line("{\"length\": true}"), HasSubstr("got 'true'"));
  EXPECT_THAT(with_second_line("{\"length\": null}"), HasSubstr("got 'null'"));
  EXPECT_THAT(with_second_line("{\"length\": {\"value\": 3}}"), HasSubstr(":2: field 'length'"));
  EXPECT_THAT(with_second_line("{\"length\": [3]}"), HasSubstr("object or array"));
  EXPECT_THAT(with_second_line("{\"length\": 3, \"length\": 4}"), HasSubstr(":2: duplicate field 'length'"));
  EXPECT_THAT(with_second_line("{\"length\": 3"), HasSubstr(":2: invalid JSON"));
  EXPECT_THAT(with_second_line("{\"length\": 3} trailing"), HasSubstr(":2: invalid JSON"));
  EXPECT_THAT(with_second_line("17"), HasSubstr(":2: expected a JSON object"));
  EXPECT_THAT(with_second_line("[{\"length\": 3}]"), HasSubstr(":2: expected a JSON object"));
}

// ---- sample_global_batch ----

TEST(SampleGlobalBatch, DeterministicForASeed) {
  const QuantileDistribution d = embedded_distribution("wikipedia");
  const auto a = sample_global_batch(d, 512, 196608, OverMaxLength::Drop, 7);
  const auto b = sample_global_batch(d, 512, 196608, OverMaxLength::Drop, 7);
  const auto c = sample_global_batch(d, 512, 196608, OverMaxLength::Drop, 8);
  EXPECT_EQ(a.size(), 512u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(SampleGlobalBatch, DrawsInOrderFromASeededGenerator) {
  const QuantileDistribution d = embedded_distribution("wikipedia");
  const std::uint64_t max_length = 1000;
  Rng rng(99);
  std::vector<std::uint64_t> truncated, dropped;
  while (dropped.size() < 300) {
    const std::uint64_t x = d.sample(rng);
    if (truncated.size() < 300) truncated.push_back(std::min(x, max_length));
    if (x <= max_length) dropped.push_back(x);
  }
  EXPECT_EQ(sample_global_batch(d, 300, max_length, OverMaxLength::Truncate, 99), truncated);
  EXPECT_EQ(sample_global_batch(d, 300, max_length, OverMaxLength::Drop, 99), dropped);
}

TEST(SampleGlobalBatch, TruncateCapsAndDropRemoves) {
  const QuantileDistribution d = embedded_distribution("wikipedia");
  const auto truncated = sample_global_batch(d, 2000, 512, OverMaxLength::Truncate, 1);
  const auto dropped = sample_global_batch(d, 2000, 512, OverMaxLength::Drop, 1);
  EXPECT_EQ(*std::max_element(truncated.begin(), truncated.end()), 512u);
  EXPECT_GT(std::count(truncated.begin(), truncated.end(), 512u), 100);
  EXPECT_LE(*std::max_element(dropped.begin(), dropped.end()), 512u);
  EXPECT_LT(std::count(dropped.begin(), dropped.end(), 512u), 20);
}

TEST(SampleGlobalBatch, GivesUpWhenNothingFits) {
  const FixedLengthDistribution d(4096);
  try {
    sample_global_batch(d, 10, 1024, OverMaxLength::Drop, 1);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("10000 draws"));
    EXPECT_THAT(e.what(), HasSubstr("fixed:4096"));
  }
  EXPECT_EQ(sample_global_batch(d, 10, 1024, OverMaxLength::Truncate, 1), std::vector<std::uint64_t>(10, 1024));
}

TEST(SampleGlobalBatch, EdgeCases) {
  const FixedLengthDistribution d(100);
  EXPECT_TRUE(sample_global_batch(d, 0, 1000, OverMaxLength::Drop, 1).empty());
  EXPECT_THROW(sample_global_batch(d, 5, 0, OverMaxLength::Truncate, 1), InputError);
}

}  // namespace
}  // namespace eppsim
