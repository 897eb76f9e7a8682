#pragma once
// Sequence-length distributions and seeded sampling of a global batch.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/rng.h"

namespace eppsim {

class LengthDistribution {
 public:
  virtual ~LengthDistribution() = default;
  virtual std::uint64_t sample(Rng& rng) const = 0;  // >= 1
  virtual std::string name() const = 0;
};

// Inverse-CDF sampling from a quantile table: (probability, length) points with
// probabilities rising strictly from 0 to 1 and positive lengths non-decreasing
// (else std::invalid_argument); interpolated linearly in log(length) between
// points. sample() is max(1, round(quantile(rng.uniform01()))).
class QuantileDistribution final : public LengthDistribution {
 public:
  QuantileDistribution(std::string name, std::vector<std::pair<double, double>> quantiles);
  std::uint64_t sample(Rng& rng) const override;
  std::string name() const override { return name_; }
  // Length at cumulative probability p in [0, 1].
  double quantile(double p) const;

 private:
  std::string name_;
  std::vector<std::pair<double, double>> quantiles_;
};

// Uniform draws (with replacement) from a list of observed lengths.
class EmpiricalListDistribution final : public LengthDistribution {
 public:
  EmpiricalListDistribution(std::string name, std::vector<std::uint64_t> lengths);
  std::uint64_t sample(Rng& rng) const override;
  std::string name() const override { return name_; }

 private:
  std::string name_;
  std::vector<std::uint64_t> lengths_;
};

// median x e^(sigma Z), Z standard normal (Boost.Math's inverse CDF of a
// uniform draw), rounded, at least 1 and at most 2^62. median > 0 and sigma >=
// 0, finite (else std::invalid_argument).
class LogNormalDistribution final : public LengthDistribution {
 public:
  LogNormalDistribution(double median, double sigma);
  std::uint64_t sample(Rng& rng) const override;
  std::string name() const override;

 private:
  double median_;
  double sigma_;
};

class FixedLengthDistribution final : public LengthDistribution {
 public:
  explicit FixedLengthDistribution(std::uint64_t length);
  std::uint64_t sample(Rng&) const override { return length_; }
  std::string name() const override;

 private:
  std::uint64_t length_;
};

// The embedded distributions, by name; throws InputError
// naming the known ones when unknown.
//   wikipedia  1M tokenised Wikipedia documents (FlexSP's list), as a quantile table.
//   longtail   a SYNTHETIC long-tailed mix standing in for the CommonCrawl and
//              GitHub lists of InfiniPipe, which are not public: log-uniform
//              inside the bins 64-2K (69.9%, the paper's largest bin for
//              CommonCrawl), 2K-8K (15%), 8K-16K (6%), 16K-32K (4.5%), 32K-64K
//              (3%), 64K-128K (1.6%, the tail its Fig. 1b reaches). Mean
//              about 5.8K tokens, 4.6% above 32K, 1.6% above 64K.
QuantileDistribution embedded_distribution(std::string_view name);

// A user's file: one positive integer per line (blank lines and '#' comments
// skipped), or JSONL objects carrying the length under `jsonl_field`. Errors
// name the file, the line and the rule. The file is JSONL when its first
// non-blank line starts with '{'. JSON is parsed by Boost.PropertyTree, which
// keeps scalars as text: a length written as a string of digits ("12") is
// accepted like the number 12.
std::vector<std::uint64_t> load_lengths_file(const std::filesystem::path& path, std::string_view jsonl_field = "length");

enum class OverMaxLength { Truncate, Drop };

// `count` lengths drawn in order from `dist` with a generator seeded by `seed`.
// Lengths above `max_length` are truncated, or dropped and drawn again (at most
// 1000 * count draws, then InputError).
std::vector<std::uint64_t> sample_global_batch(const LengthDistribution& dist, std::uint32_t count,
                                               std::uint64_t max_length, OverMaxLength policy, std::uint64_t seed);

}  // namespace eppsim
