#include "sim/bench_drift.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/message_differencer.h>

#include "base/errors.h"
#include "base/proto_io.h"

namespace eppsim {
namespace {

using RowKey = std::tuple<std::string, std::string, std::string, std::uint64_t, std::uint64_t, std::uint32_t,
                          std::uint64_t, std::uint64_t, std::uint64_t>;

RowKey key_of(const proto::BenchResult& r) {
  return {r.kernel(), r.pass(), r.name(), r.tokens(), r.context_tokens(), r.has_segments() ? r.segments() : 1u,
          r.m(), r.n(), r.k()};
}

}  // namespace

ComputeDrift compute_drift(const proto::BenchFile& before, const proto::BenchFile& after, std::string_view before_file,
                           std::string_view after_file) {
  if (before.kind() != "compute" || after.kind() != "compute" || before.backend() != after.backend() ||
      !google::protobuf::util::MessageDifferencer::Equals(before.model(), after.model())) {
    throw InputError(fmt::format("{} and {}: must be compute benchmarks of one backend and model to compare",
                                 before_file, after_file));
  }
  std::map<RowKey, double> earlier;
  for (const auto& r : before.results()) earlier.emplace(key_of(r), r.time_s());
  ComputeDrift drift;
  for (const auto& r : after.results()) {
    const auto it = earlier.find(key_of(r));
    if (it == earlier.end() || it->second <= 0.0) continue;
    const double ratio = r.time_s() / it->second;
    drift.least_row_ratio = drift.rows == 0 ? ratio : std::min(drift.least_row_ratio, ratio);
    drift.most_row_ratio = drift.rows == 0 ? ratio : std::max(drift.most_row_ratio, ratio);
    drift.before_s += it->second;
    drift.after_s += r.time_s();
    ++drift.rows;
  }
  if (drift.rows == 0) {
    throw InputError(fmt::format("{}: results: no row is one of {}'s (same kernel, pass, shape and tokens)",
                                 after_file, before_file));
  }
  return drift;
}

std::uint64_t largest_plain_layer_tokens(const proto::BenchFile& bench, std::string_view file) {
  std::uint64_t tokens = 0;
  for (const auto& r : bench.results()) {
    if (r.kernel() == "layer" && r.context_tokens() == 0 && (!r.has_segments() || r.segments() == 1))
      tokens = std::max<std::uint64_t>(tokens, r.tokens());
  }
  if (tokens == 0) throw InputError(fmt::format("{}: results: no layer row without context or packing", file));
  return tokens;
}

std::string compute_drift_json(const ComputeDrift& drift) {
  google::protobuf::Struct doc;
  auto& f = *doc.mutable_fields();
  f["rows"].set_number_value(drift.rows);
  f["before_s"].set_number_value(drift.before_s);
  f["after_s"].set_number_value(drift.after_s);
  f["drift"].set_number_value(drift.drift());
  f["least_row_ratio"].set_number_value(drift.least_row_ratio);
  f["most_row_ratio"].set_number_value(drift.most_row_ratio);
  return to_json(doc);
}

}  // namespace eppsim
