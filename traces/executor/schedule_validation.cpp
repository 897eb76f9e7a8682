#include "traces/executor/schedule_validation.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "models/errors.h"
#include "models/input_limits.h"
#include "traces/executor/op_prefetch.h"
#include "traces/schedule_schema.h"

namespace eppsim {
namespace {

[[noreturn]] void fail(const std::string& what) { throw InputError("schedule: " + what); }

// Members of every group, sorted, in one flat array: membership by binary search
// (a rank x group table would not fit 100,000 ranks with many groups).
class GroupMembers {
 public:
  explicit GroupMembers(const proto::Schedule& schedule) {
    const auto ranks = schedule.num_ranks();
    offsets_.reserve(static_cast<std::size_t>(schedule.groups_size()) + 1);
    offsets_.push_back(0);
    for (int g = 0; g < schedule.groups_size(); ++g) {
      const auto& group = schedule.groups(g);
      if (group.id() != static_cast<std::uint32_t>(g)) fail(fmt::format("groups[{}].id: must equal its index, got {}", g, group.id()));
      const auto begin = members_.size();
      for (auto r : group.ranks()) {
        if (r >= ranks) fail(fmt::format("groups[{}]: rank {} out of range (num_ranks {})", g, r, ranks));
        members_.push_back(r);
      }
      std::sort(members_.begin() + static_cast<std::ptrdiff_t>(begin), members_.end());
      const auto dup = std::adjacent_find(members_.begin() + static_cast<std::ptrdiff_t>(begin), members_.end());
      if (dup != members_.end()) fail(fmt::format("groups[{}]: rank {} listed twice", g, *dup));
      offsets_.push_back(members_.size());
    }
  }

  std::size_t groups() const { return offsets_.size() - 1; }
  std::size_t size(std::uint32_t group) const { return offsets_[group + 1] - offsets_[group]; }
  bool contains(std::uint32_t group, std::uint32_t rank) const {
    return std::binary_search(members_.begin() + static_cast<std::ptrdiff_t>(offsets_[group]),
                              members_.begin() + static_cast<std::ptrdiff_t>(offsets_[group + 1]), rank);
  }

 private:
  std::vector<std::size_t> offsets_;
  std::vector<std::uint32_t> members_;
};

// Where an op is, for messages: "rank 3 op 17" (formatted only on failure).
struct OpAt {
  std::uint32_t rank;
  int op;
};

}  // namespace
}  // namespace eppsim

template <>
struct fmt::formatter<eppsim::OpAt> : fmt::formatter<std::string_view> {
  auto format(const eppsim::OpAt& at, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "rank {} op {}", at.rank, at.op);
  }
};

namespace eppsim {
namespace {

// Where a compute op's work is, for messages: an op's own ("rank 3 op 17:
// compute") or a shared one ("shared_computes[5]").
struct WorkAt {
  OpAt op;
  int shared = -1;
};

}  // namespace
}  // namespace eppsim

template <>
struct fmt::formatter<eppsim::WorkAt> : fmt::formatter<std::string_view> {
  auto format(const eppsim::WorkAt& at, fmt::format_context& ctx) const {
    if (at.shared >= 0) return fmt::format_to(ctx.out(), "shared_computes[{}]", at.shared);
    return fmt::format_to(ctx.out(), "rank {} op {}: compute", at.op.rank, at.op.op);
  }
};

namespace eppsim {
namespace {

// What a compute op's work must satisfy wherever it is listed.
void check_work(const proto::ComputeOp& c, const GroupMembers& groups, WorkAt where) {
  if (!proto::Phase_IsValid(c.phase())) fail(fmt::format("{}.phase: unknown value {}", where, static_cast<int>(c.phase())));
  if (!proto::LayerPart_IsValid(c.layer_part()))
    fail(fmt::format("{}.layer_part: unknown value {}", where, static_cast<int>(c.layer_part())));
  if (c.layer_count() > limits::kMaxLayers) {
    fail(fmt::format("{}.layer_count: must be <= {} (the bound of models/input_limits.h), got {}", where,
                     limits::kMaxLayers, c.layer_count()));
  }
  std::uint64_t product = 1;
  for (int s = 0; s < c.splits_size(); ++s) {
    const auto& split = c.splits(s);
    if (split.kind() == proto::SPLIT_KIND_UNSPECIFIED || !proto::SplitKind_IsValid(split.kind())) {
      fail(fmt::format("{}.splits[{}].kind: must be SEQUENCE_PARALLEL, TENSOR_PARALLEL or CONTEXT_PARALLEL", where, s));
    }
    const auto group = split.group();
    if (group >= groups.groups()) fail(fmt::format("{}.splits[{}].group: unknown group {}", where, s, group));
    product *= groups.size(group);
  }
  const std::uint64_t shards = c.shards() > 1 ? c.shards() : 1;
  if (shards != product) {
    fail(fmt::format("{}.shards: must be the product of the split groups' sizes ({}), got {}", where, product,
                     c.shards()));
  }
  if (c.segment_context_tokens_size() != c.segment_tokens_size()) {
    fail(fmt::format("{}.segment_context_tokens: must have one entry per segment_tokens entry ({}), got {}", where,
                     c.segment_tokens_size(), c.segment_context_tokens_size()));
  }
  if (c.segments_size() > 0) {
    fail(fmt::format("{}.segments: schema version 2's segment messages; version {} lists segments in "
                     "segment_tokens and segment_context_tokens (eppsim converts a version-2 file as it reads it)",
                     where, kScheduleSchemaVersion));
  }
}

// The op's rank must be in every group its work is split over.
void check_split_members(const proto::ComputeOp& c, const GroupMembers& groups, WorkAt where) {
  for (int s = 0; s < c.splits_size(); ++s) {
    const auto group = c.splits(s).group();
    if (!groups.contains(group, where.op.rank)) {
      fail(fmt::format("{}{}.splits[{}].group: rank {} is not a member of group {}",
                       where.shared >= 0 ? fmt::format("rank {} op {}: ", where.op.rank, where.op.op) : "", where, s,
                       where.op.rank, group));
    }
  }
}

void check_bytes(std::uint64_t bytes, std::string_view field, OpAt where) {
  if (bytes > limits::kMaxOpBytes) {
    fail(fmt::format("{}: {}: must be <= {} (the bound of models/input_limits.h), got {}", where, field,
                     limits::kMaxOpBytes, bytes));
  }
}

void check_duration(const proto::Op& op, OpAt where) {
  switch (op.duration_source()) {
    case proto::DURATION_FROM_WORK:
      if (op.fixed_duration_ns() != 0) {
        fail(fmt::format("{}: fixed_duration_ns: set to {} but duration_source is DURATION_FROM_WORK", where,
                         op.fixed_duration_ns()));
      }
      break;
    case proto::DURATION_FIXED:
      if (op.fixed_duration_ns() < 0) fail(fmt::format("{}: fixed_duration_ns: must be >= 0, got {}", where, op.fixed_duration_ns()));
      if (op.has_memory() && op.fixed_duration_ns() != 0) {
        fail(fmt::format("{}: fixed_duration_ns: a MEMORY op takes no time, got {}", where, op.fixed_duration_ns()));
      }
      break;
    default:
      fail(fmt::format("{}: duration_source: unknown value {}", where, static_cast<int>(op.duration_source())));
  }
}

}  // namespace

void validate_schedule(const proto::Schedule& schedule) {
  const auto version = schedule.header().schema_version();
  if (version > kScheduleSchemaVersion) {
    fail(fmt::format("header.schema_version: {} is newer than this eppsim reads (at most {})", version,
                     kScheduleSchemaVersion));
  }
  const auto ranks = schedule.num_ranks();
  if (static_cast<std::uint32_t>(schedule.programs_size()) != ranks) {
    fail(fmt::format("num_ranks is {} but there are {} programs", ranks, schedule.programs_size()));
  }
  if (schedule.placement_size() != 0 && static_cast<std::uint32_t>(schedule.placement_size()) != ranks) {
    fail(fmt::format("num_ranks is {} but there are {} placements", ranks, schedule.placement_size()));
  }
  const GroupMembers groups(schedule);
  const auto streams = static_cast<std::uint32_t>(schedule.stream_names_size());
  for (int w = 0; w < schedule.shared_computes_size(); ++w) {
    check_work(schedule.shared_computes(w), groups, WorkAt{{0, 0}, w});
  }
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const auto& ops = schedule.programs(static_cast<int>(r)).ops();
    for (int i = 0; i < ops.size(); ++i) {
      prefetch_ops(ops, i);
      const auto& op = ops[i];
      const OpAt at{r, i};
      if (op.stream() >= streams) fail(fmt::format("{}: stream {} out of range ({} streams)", at, op.stream(), streams));
      for (auto d : op.deps()) {
        if (d >= static_cast<std::uint32_t>(i)) fail(fmt::format("{}: depends on op {}, which is not earlier", at, d));
      }
      if (op.duration_source() != proto::DURATION_FROM_WORK || op.fixed_duration_ns() != 0) check_duration(op, at);
      switch (op.kind_case()) {
        case proto::Op::kSend:
          if (op.send().peer() >= ranks) fail(fmt::format("{}: send peer {} out of range", at, op.send().peer()));
          check_bytes(op.send().size_bytes(), "send.size_bytes", at);
          break;
        case proto::Op::kRecv:
          if (op.recv().peer() >= ranks) fail(fmt::format("{}: recv peer {} out of range", at, op.recv().peer()));
          check_bytes(op.recv().size_bytes(), "recv.size_bytes", at);
          break;
        case proto::Op::kCollective: {
          const auto& c = op.collective();
          if (c.group() >= groups.groups()) fail(fmt::format("{}: unknown group {}", at, c.group()));
          if (!groups.contains(c.group(), r)) fail(fmt::format("{}: rank {} is not a member of group {}", at, r, c.group()));
          if (c.kind() == proto::COLLECTIVE_KIND_UNSPECIFIED) fail(fmt::format("{}: collective kind not set", at));
          if (!proto::CollectiveKind_IsValid(c.kind()))
            fail(fmt::format("{}: collective.kind: unknown value {}", at, static_cast<int>(c.kind())));
          if (!proto::CollectiveAlgorithm_IsValid(c.algorithm()))
            fail(fmt::format("{}: collective.algorithm: unknown value {}", at, static_cast<int>(c.algorithm())));
          check_bytes(c.size_bytes(), "collective.size_bytes", at);
          break;
        }
        case proto::Op::kCompute: {
          const WorkAt where{at};
          check_work(op.compute(), groups, where);
          check_split_members(op.compute(), groups, where);
          break;
        }
        case proto::Op::kSharedCompute: {
          const auto index = op.shared_compute();
          if (index >= static_cast<std::uint32_t>(schedule.shared_computes_size())) {
            fail(fmt::format("{}: shared_compute: index {} out of range ({} shared computes)", at, index,
                             schedule.shared_computes_size()));
          }
          check_split_members(schedule.shared_computes(static_cast<int>(index)), groups,
                              WorkAt{at, static_cast<int>(index)});
          break;
        }
        case proto::Op::kMemory:
          if (!proto::MemoryTag_IsValid(op.memory().tag()))
            fail(fmt::format("{}: memory.tag: unknown value {}", at, static_cast<int>(op.memory().tag())));
          check_bytes(op.memory().size_bytes(), "memory.size_bytes", at);
          break;
        case proto::Op::KIND_NOT_SET:
          fail(fmt::format("{}: op kind not set", at));
      }
    }
  }
}

}  // namespace eppsim
