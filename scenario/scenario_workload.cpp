#include "scenario/scenario_parts.h"

#include "models/length_distribution.h"

namespace eppsim::scenario_parts {
namespace {

std::shared_ptr<const LengthDistribution> resolve_lengths(const proto::LengthSource& lengths,
                                                          const std::filesystem::path& base_dir,
                                                          const FieldLocator& where) {
  if (!lengths.jsonl_field().empty() && lengths.source_case() != proto::LengthSource::kFile)
    where.fail("workload.lengths.jsonl_field", "only applies to a file source (workload.lengths.file)");
  switch (lengths.source_case()) {
    case proto::LengthSource::kDistribution:
      try {
        return std::make_shared<QuantileDistribution>(embedded_distribution(lengths.distribution()));
      } catch (const InputError& e) {
        where.fail("workload.lengths.distribution", e.what());
      }
    case proto::LengthSource::kFile: {
      if (lengths.file().empty()) where.fail("workload.lengths.file", "must not be empty");
      std::filesystem::path file(lengths.file());
      if (file.is_relative()) file = base_dir / file;
      std::error_code error;
      if (!std::filesystem::exists(file, error)) {
        where.fail("workload.lengths.file", fmt::format("no such file {} (relative paths resolve against {})",
                                                        file.string(), base_dir.string()));
      }
      std::vector<std::uint64_t> values;
      try {
        values = load_lengths_file(file, lengths.jsonl_field().empty() ? "length" : lengths.jsonl_field());
      } catch (const InputError& e) {
        where.fail("workload.lengths.file", e.what());
      }
      if (values.empty()) where.fail("workload.lengths.file", fmt::format("{} holds no lengths", file.string()));
      return std::make_shared<EmpiricalListDistribution>(lengths.file(), std::move(values));
    }
    case proto::LengthSource::kFixed:
      if (lengths.fixed() == 0) where.fail("workload.lengths.fixed", "must be > 0, got 0");
      require_at_most(where, "workload.lengths.fixed", lengths.fixed(), limits::kMaxSequenceTokens);
      return std::make_shared<FixedLengthDistribution>(lengths.fixed());
    case proto::LengthSource::kLognormal: {
      const proto::LogNormalLengths& lognormal = lengths.lognormal();
      if (!(lognormal.median_tokens() >= 1.0))
        where.fail("workload.lengths.lognormal.median_tokens", fmt::format("must be >= 1, got {}", lognormal.median_tokens()));
      require_at_most(where, "workload.lengths.lognormal.median_tokens", lognormal.median_tokens(),
                      static_cast<double>(limits::kMaxSequenceTokens));
      if (!(lognormal.sigma() >= 0.0))
        where.fail("workload.lengths.lognormal.sigma", fmt::format("must be >= 0, got {}", lognormal.sigma()));
      require_at_most(where, "workload.lengths.lognormal.sigma", lognormal.sigma(), limits::kMaxLengthSigma);
      return std::make_shared<LogNormalDistribution>(lognormal.median_tokens(), lognormal.sigma());
    }
    case proto::LengthSource::SOURCE_NOT_SET: break;
  }
  where.fail("workload.lengths", "set one of distribution (e.g. \"wikipedia\"), file, fixed or lognormal");
}

OverMaxLength resolve_over_max_length(proto::OverMaxLength value, const FieldLocator& where) {
  switch (value) {
    case proto::OVER_MAX_LENGTH_UNSPECIFIED:
    case proto::TRUNCATE: return OverMaxLength::Truncate;
    case proto::DROP: return OverMaxLength::Drop;
    default: break;
  }
  where.fail("workload.over_max_length", fmt::format("unknown value {} (known: TRUNCATE, DROP)", static_cast<int>(value)));
}
}  // namespace

void resolve_workload(const proto::Workload& workload, const std::filesystem::path& base_dir, ResolvedScenario* resolved,
                      const FieldLocator& where) {
  if (workload.has_collective()) {
    resolve_collective(workload.collective(), resolved, where);
    return;
  }
  resolved->workload.lengths = resolve_lengths(workload.lengths(), base_dir, where);
  if (workload.global_batch() == 0) where.fail("workload.global_batch", "must be > 0, got 0");
  require_at_most(where, "workload.global_batch", workload.global_batch(), limits::kMaxGlobalBatch);
  resolved->workload.global_batch = workload.global_batch();
  if (const auto repeats = workload.repeats(); repeats != 0) {
    if (workload.global_batch() % repeats != 0) {
      where.fail("workload.repeats", fmt::format("must divide workload.global_batch ({}): the batch is global_batch / "
                                                 "repeats drawn sequences, each repeated; got {}",
                                                 workload.global_batch(), repeats));
    }
    resolved->workload.repeats = repeats;
  }
  if (workload.max_length() == 0) where.fail("workload.max_length", "must be > 0, got 0");
  require_at_most(where, "workload.max_length", workload.max_length(), limits::kMaxSequenceTokens);
  resolved->workload.max_length = workload.max_length();
  resolved->workload.over_max_length = resolve_over_max_length(workload.over_max_length(), where);
}

}  // namespace eppsim::scenario_parts
