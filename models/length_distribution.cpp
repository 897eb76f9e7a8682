#include "models/length_distribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "models/embedded/quantile_tables.h"
#include "base/errors.h"
#include "base/input_limits.h"

namespace eppsim {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A positive decimal integer with nothing else around it, or nothing.
std::optional<std::uint64_t> parse_positive_integer(std::string_view text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front()))) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0) return std::nullopt;
  return value;
}

[[noreturn]] void fail_at(const std::filesystem::path& path, std::size_t line, std::string_view message) {
  throw InputError(fmt::format("{}:{}: {}", path.string(), line, message));
}

std::uint64_t jsonl_length(const std::filesystem::path& path, std::size_t line_number, std::string_view line,
                           std::string_view field) {
  namespace pt = boost::property_tree;
  if (line.front() != '{') fail_at(path, line_number, "expected a JSON object (the file is JSONL: its first line is one)");
  pt::ptree object;
  std::istringstream in{std::string(line)};
  try {
    pt::read_json(in, object);
  } catch (const pt::json_parser_error& e) {
    fail_at(path, line_number, fmt::format("invalid JSON: {}", e.message()));
  }
  const std::string key(field);
  const std::size_t count = object.count(key);
  if (count == 0) fail_at(path, line_number, fmt::format("missing field '{}'", field));
  if (count > 1) fail_at(path, line_number, fmt::format("duplicate field '{}'", field));
  const pt::ptree& value = object.find(key)->second;
  if (!value.empty()) {
    fail_at(path, line_number, fmt::format("field '{}': expected a positive integer length, got an object or array", field));
  }
  // Property trees keep every scalar as text: a number is its JSON spelling (so
  // 12.0, 1e3 and -4 are rejected here), true/false/null their names. A length
  // written as a JSON string of digits ("12") is accepted like the number.
  const std::optional<std::uint64_t> length = parse_positive_integer(value.data());
  if (!length) {
    fail_at(path, line_number,
            fmt::format("field '{}': expected a positive integer length, got '{}'", field, value.data()));
  }
  return *length;
}

}  // namespace

QuantileDistribution::QuantileDistribution(std::string name, std::vector<std::pair<double, double>> quantiles)
    : name_(std::move(name)), quantiles_(std::move(quantiles)) {
  const auto fail = [&](std::string_view rule) {
    throw std::invalid_argument(fmt::format("quantile distribution '{}': {}", name_, rule));
  };
  if (quantiles_.size() < 2) fail(fmt::format("needs at least 2 points, got {}", quantiles_.size()));
  for (std::size_t i = 0; i < quantiles_.size(); ++i) {
    const auto [p, length] = quantiles_[i];
    if (!std::isfinite(p) || !std::isfinite(length)) fail(fmt::format("point {}: ({}, {}) is not finite", i, p, length));
    if (!(length > 0.0)) fail(fmt::format("point {}: length must be > 0, got {}", i, length));
    if (i > 0) {
      const auto [prev_p, prev_length] = quantiles_[i - 1];
      if (!(p > prev_p)) {
        fail(fmt::format("point {}: probabilities must rise strictly, got {} after {}", i, p, prev_p));
      }
      if (length < prev_length) {
        fail(fmt::format("point {}: lengths must not decrease, got {} after {}", i, length, prev_length));
      }
    }
  }
  if (quantiles_.front().first != 0.0) fail(fmt::format("first probability must be 0, got {}", quantiles_.front().first));
  if (quantiles_.back().first != 1.0) fail(fmt::format("last probability must be 1, got {}", quantiles_.back().first));
}

double QuantileDistribution::quantile(double p) const {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::invalid_argument(fmt::format("quantile distribution '{}': probability must be in [0, 1], got {}", name_, p));
  }
  // The first point above p; p == 1 has none and gives the last length.
  const auto upper = std::upper_bound(quantiles_.begin(), quantiles_.end(), p,
                                      [](double q, const std::pair<double, double>& point) { return q < point.first; });
  if (upper == quantiles_.end()) return quantiles_.back().second;
  const auto [p1, l1] = *upper;
  const auto [p0, l0] = *(upper - 1);
  if (l0 == l1) return l0;
  const double t = (p - p0) / (p1 - p0);
  return l0 * std::exp(t * std::log(l1 / l0));  // exactly l0 at a point (t = 0)
}

std::uint64_t QuantileDistribution::sample(Rng& rng) const {
  const long long length = std::llround(quantile(rng.uniform01()));
  return static_cast<std::uint64_t>(std::max(1LL, length));
}

LogNormalDistribution::LogNormalDistribution(double median, double sigma) : median_(median), sigma_(sigma) {
  if (!(median > 0.0) || !std::isfinite(median) || !(sigma >= 0.0) || !std::isfinite(sigma))
    throw std::invalid_argument(fmt::format("log-normal lengths: median {} must be > 0 and sigma {} >= 0", median, sigma));
}

std::uint64_t LogNormalDistribution::sample(Rng& rng) const {
  const double u = rng.uniform01() + 0x1.0p-54;  // in (0, 1): the inverse CDF is finite
  const double z = boost::math::quantile(boost::math::normal_distribution<double>(), u);
  const double length = std::min(median_ * std::exp(sigma_ * z), 0x1.0p62);
  return static_cast<std::uint64_t>(std::max(1LL, std::llround(length)));
}

std::string LogNormalDistribution::name() const { return fmt::format("lognormal(median {}, sigma {})", median_, sigma_); }

EmpiricalListDistribution::EmpiricalListDistribution(std::string name, std::vector<std::uint64_t> lengths)
    : name_(std::move(name)), lengths_(std::move(lengths)) {
  if (lengths_.empty()) throw std::invalid_argument(fmt::format("length list '{}': no lengths", name_));
  const auto zero = std::find(lengths_.begin(), lengths_.end(), 0);
  if (zero != lengths_.end()) {
    throw std::invalid_argument(
        fmt::format("length list '{}': length {} is 0; lengths must be >= 1", name_, zero - lengths_.begin()));
  }
}

std::uint64_t EmpiricalListDistribution::sample(Rng& rng) const { return lengths_[rng.below(lengths_.size())]; }

FixedLengthDistribution::FixedLengthDistribution(std::uint64_t length) : length_(length) {
  if (length_ == 0) throw std::invalid_argument("fixed length distribution: length must be >= 1, got 0");
}

std::string FixedLengthDistribution::name() const { return fmt::format("fixed:{}", length_); }

QuantileDistribution embedded_distribution(std::string_view name) {
  if (lower(name) == "wikipedia") {
    const auto table = embedded::wikipedia_quantiles();
    return QuantileDistribution("wikipedia", {table.begin(), table.end()});
  }
  if (lower(name) == "longtail") {
    // Log-uniform inside each bin; the bins' masses as documented in the header.
    return QuantileDistribution("longtail", {{0.0, 64.0},
                                             {0.699, 2048.0},
                                             {0.849, 8192.0},
                                             {0.909, 16384.0},
                                             {0.954, 32768.0},
                                             {0.984, 65536.0},
                                             {1.0, 131072.0}});
  }
  throw InputError(fmt::format("unknown length distribution '{}'; embedded distributions: wikipedia, longtail", name));
}

std::vector<std::uint64_t> load_lengths_file(const std::filesystem::path& path, std::string_view jsonl_field) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!error && status.type() != std::filesystem::file_type::regular)
    throw InputError(fmt::format("{}: not a regular file (a directory, FIFO or device cannot be a length file)", path.string()));
  if (const auto size = std::filesystem::file_size(path, error); !error && size > limits::kMaxLengthsFileBytes) {
    throw InputError(fmt::format("{}: {} bytes is too large: a length file holds at most {} bytes", path.string(), size,
                                 limits::kMaxLengthsFileBytes));
  }
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  std::vector<std::uint64_t> lengths;
  std::string raw;
  std::size_t line_number = 0;
  enum class Format { Unknown, Text, Jsonl } format = Format::Unknown;
  while (std::getline(in, raw)) {
    ++line_number;
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (format == Format::Unknown) format = line.front() == '{' ? Format::Jsonl : Format::Text;
    std::uint64_t length = 0;
    if (format == Format::Jsonl) {
      length = jsonl_length(path, line_number, line, jsonl_field);
    } else {
      line = trim(line.substr(0, line.find('#')));  // a comment runs to the end of the line
      if (line.empty()) continue;
      const std::optional<std::uint64_t> parsed = parse_positive_integer(line);
      if (!parsed) fail_at(path, line_number, fmt::format("expected a positive integer length, got '{}'", line));
      length = *parsed;
    }
    if (length > limits::kMaxSequenceTokens)
      fail_at(path, line_number, fmt::format("length {} tokens: must be <= {}", length, limits::kMaxSequenceTokens));
    lengths.push_back(length);
  }
  if (in.bad()) throw InputError(fmt::format("{}: read error after line {}", path.string(), line_number));
  if (lengths.empty()) {
    throw InputError(fmt::format(
        "{}: no lengths found; expected one positive integer per line, or JSONL objects with a '{}' field",
        path.string(), jsonl_field));
  }
  return lengths;
}

std::vector<std::uint64_t> sample_global_batch(const LengthDistribution& dist, std::uint32_t count,
                                               std::uint64_t max_length, OverMaxLength policy, std::uint64_t seed) {
  if (max_length == 0) throw InputError("sampling a global batch: max_length must be >= 1, got 0");
  Rng rng(seed);
  std::vector<std::uint64_t> lengths;
  lengths.reserve(count);
  const std::uint64_t max_draws = 1000ULL * count;
  std::uint64_t draws = 0;
  while (lengths.size() < count) {
    if (draws == max_draws) {
      throw InputError(fmt::format(
          "sampling {} lengths from '{}' with max_length {}: only {} of {} draws were at most max_length; "
          "raise max_length or truncate instead of dropping",
          count, dist.name(), max_length, lengths.size(), draws));
    }
    const std::uint64_t length = dist.sample(rng);
    ++draws;
    if (length <= max_length) {
      lengths.push_back(length);
    } else if (policy == OverMaxLength::Truncate) {
      lengths.push_back(max_length);
    }
  }
  return lengths;
}

}  // namespace eppsim
