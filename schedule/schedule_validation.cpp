#include "schedule/schedule_validation.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/input_limits.h"
#include "schedule/program_ops.h"
#include "schedule/schedule_schema.h"

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

// What a compute op's work, shared_computes[index], must satisfy.
void check_work(const proto::ComputeOp& c, const GroupMembers& groups, int index) {
  // Named only when one fails: a schedule has a work per distinct shape.
  const auto where = [index] { return fmt::format("shared_computes[{}]", index); };
  if (!proto::Phase_IsValid(c.phase())) fail(fmt::format("{}.phase: unknown value {}", where(), static_cast<int>(c.phase())));
  if (!proto::LayerPart_IsValid(c.layer_part()))
    fail(fmt::format("{}.layer_part: unknown value {}", where(), static_cast<int>(c.layer_part())));
  if (c.layer_count() > limits::kMaxLayers) {
    fail(fmt::format("{}.layer_count: must be <= {} (the bound of base/input_limits.h), got {}", where(),
                     limits::kMaxLayers, c.layer_count()));
  }
  std::uint64_t product = 1;
  for (int s = 0; s < c.splits_size(); ++s) {
    const auto& split = c.splits(s);
    if (split.kind() == proto::SPLIT_KIND_UNSPECIFIED || !proto::SplitKind_IsValid(split.kind())) {
      fail(fmt::format("{}.splits[{}].kind: must be SEQUENCE_PARALLEL, TENSOR_PARALLEL or CONTEXT_PARALLEL", where(), s));
    }
    const auto group = split.group();
    if (group >= groups.groups()) fail(fmt::format("{}.splits[{}].group: unknown group {}", where(), s, group));
    product *= groups.size(group);
  }
  const std::uint64_t shards = c.shards() > 1 ? c.shards() : 1;
  if (shards != product) {
    fail(fmt::format("{}.shards: must be the product of the split groups' sizes ({}), got {}", where(), product,
                     c.shards()));
  }
  if (c.segment_context_tokens_size() != c.segment_tokens_size()) {
    fail(fmt::format("{}.segment_context_tokens: must have one entry per segment_tokens entry ({}), got {}", where(),
                     c.segment_tokens_size(), c.segment_context_tokens_size()));
  }
  if (c.segments_size() > 0) {
    fail(fmt::format("{}.segments: schema version 2's segment messages; version {} lists segments in "
                     "segment_tokens and segment_context_tokens (eppsim converts a version-2 file as it reads it)",
                     where(), kScheduleSchemaVersion));
  }
}

// The op's rank must be in every group its work, shared_computes[index], is split over.
void check_split_members(const proto::ComputeOp& c, const GroupMembers& groups, OpAt at, int index) {
  for (int s = 0; s < c.splits_size(); ++s) {
    const auto group = c.splits(s).group();
    if (!groups.contains(group, at.rank)) {
      fail(fmt::format("{}: shared_computes[{}].splits[{}].group: rank {} is not a member of group {}", at, index, s,
                       at.rank, group));
    }
  }
}

void check_bytes(std::uint64_t bytes, std::string_view field, OpAt where) {
  if (bytes > limits::kMaxOpBytes) {
    fail(fmt::format("{}: {}: must be <= {} (the bound of base/input_limits.h), got {}", where, field,
                     limits::kMaxOpBytes, bytes));
  }
}

void check_duration(OpView op, OpAt where) {
  switch (op.duration_source()) {
    case proto::DURATION_FROM_WORK:
      if (op.fixed_duration_ns() != 0) {
        fail(fmt::format("{}: fixed_duration_ns: set to {} but duration_source is DURATION_FROM_WORK", where,
                         op.fixed_duration_ns()));
      }
      break;
    case proto::DURATION_FIXED:
      if (op.fixed_duration_ns() < 0) fail(fmt::format("{}: fixed_duration_ns: must be >= 0, got {}", where, op.fixed_duration_ns()));
      if (op.is_memory() && op.fixed_duration_ns() != 0) {
        fail(fmt::format("{}: fixed_duration_ns: a MEMORY op takes no time, got {}", where, op.fixed_duration_ns()));
      }
      break;
    default:
      fail(fmt::format("{}: duration_source: unknown value {}", where, static_cast<int>(op.duration_source())));
  }
}

// The program's columns: every per-op column one entry per op, each optional
// one none or one per op, one dep_on per dep_op, dep_op ascending (OpView and
// ProgramOps rely on all of it).
void check_columns(const proto::RankProgram& p, std::uint32_t rank) {
  if (!p.ops().empty()) {
    fail(fmt::format("programs[{}].ops: ops as messages are schema version 4's form; version {} lists them in "
                     "columns (eppsim converts an older file as it reads it)",
                     rank, kScheduleSchemaVersion));
  }
  const int n = p.stream_size();
  const auto column = [&](std::string_view field, int size, bool optional) {
    if (size == n || (optional && size == 0)) return;
    fail(fmt::format("programs[{}].{}: must have {}one entry per op ({}, as stream), got {}", rank, field,
                     optional ? "no entry or " : "", n, size));
  };
  column("code", p.code_size(), false);
  column("target", p.target_size(), false);
  column("size_bytes", p.size_bytes_size(), false);
  column("detail", p.detail_size(), false);
  column("algorithm", p.algorithm_size(), true);
  column("duration_source", p.duration_source_size(), true);
  column("fixed_duration_ns", p.fixed_duration_ns_size(), true);
  if (p.dep_on_size() != p.dep_op_size()) {
    fail(fmt::format("programs[{}].dep_on: must have one entry per dep_op entry ({}), got {}", rank, p.dep_op_size(),
                     p.dep_on_size()));
  }
  for (int k = 0; k < p.dep_op_size(); ++k) {
    const auto op = p.dep_op(k);
    if (op >= static_cast<std::uint32_t>(n)) fail(fmt::format("programs[{}].dep_op[{}]: op {} out of range ({} ops)", rank, k, op, n));
    if (k > 0 && op < p.dep_op(k - 1)) {
      fail(fmt::format("programs[{}].dep_op[{}]: must be ascending, got {} after {}", rank, k, op, p.dep_op(k - 1)));
    }
  }
}

// The values below 64 an enum's IsValid accepts, as bits, so that a column of
// them is checked with a shift and a mask instead of a call per entry.
template <class IsValid>
std::uint64_t valid_below_64(IsValid is_valid) {
  std::uint64_t bits = 0;
  for (int v = 0; v < 64; ++v) bits |= is_valid(v) ? std::uint64_t{1} << v : 0;
  return bits;
}
bool in(std::uint64_t bits, std::uint64_t value) { return value < 64 && (bits >> value & 1) != 0; }

}  // namespace

struct ScheduleValidator::Checked {
  explicit Checked(const proto::Schedule& s) : groups(s) {}
  GroupMembers groups;
  // The groups each work is split over, as a set shared by every work split
  // over the same groups in the same order (a handful of sets for millions
  // of works): read from the works in one pass, in order, so that checking
  // a rank's ops reads a word per op instead of its work's message, which
  // lies anywhere in the Schedule (a cache miss or more an op once the
  // Schedule outgrows the cache).
  std::vector<std::uint32_t> split_set_of_work;
  std::vector<std::uint32_t> split_set_offset{0};  // per set, and one more: its row of split_set_groups
  std::vector<std::uint32_t> split_set_groups;
  std::map<std::vector<std::uint32_t>, std::uint32_t> split_set_of_groups;
  // Interns work `c`'s split groups: their set.
  std::uint32_t split_set(const proto::ComputeOp& c);
  bool in_split_set(std::uint32_t set, std::uint32_t rank) const {
    for (auto k = split_set_offset[set]; k < split_set_offset[set + 1]; ++k) {
      if (!groups.contains(split_set_groups[k], rank)) return false;
    }
    return true;
  }
  // The last rank whose membership of each split set, and of each group, was
  // checked: a rank runs works of the same sets many times (its layers, its
  // micro-batches) and meets the same groups many times.
  std::vector<std::uint32_t> split_set_checked_for;
  std::vector<std::uint32_t> group_checked_for;
  std::vector<std::uint32_t> scratch;  // split_set's
  const std::uint64_t collective_kinds = valid_below_64(proto::CollectiveKind_IsValid) & ~std::uint64_t{1};
  const std::uint64_t memory_tags = valid_below_64(proto::MemoryTag_IsValid);
  const std::uint64_t algorithms = valid_below_64(proto::CollectiveAlgorithm_IsValid);
};

ScheduleValidator::ScheduleValidator(const proto::Schedule& schedule) : schedule_(schedule) {
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
  checked_ = std::make_unique<Checked>(schedule);
  checked_->split_set_of_work.reserve(static_cast<std::size_t>(schedule.shared_computes_size()));
  for (int w = 0; w < schedule.shared_computes_size(); ++w) {
    const proto::ComputeOp& work = schedule.shared_computes(w);
    check_work(work, checked_->groups, w);
    checked_->split_set_of_work.push_back(checked_->split_set(work));
  }
  checked_->split_set_checked_for.assign(checked_->split_set_offset.size() - 1, ranks);
  checked_->group_checked_for.assign(checked_->groups.groups(), ranks);
}

std::uint32_t ScheduleValidator::Checked::split_set(const proto::ComputeOp& c) {
  scratch.clear();
  for (const auto& split : c.splits()) scratch.push_back(split.group());
  // Works come in runs split alike: the last set first.
  const auto sets = static_cast<std::uint32_t>(split_set_offset.size() - 1);
  if (sets > 0 && std::equal(scratch.begin(), scratch.end(), split_set_groups.begin() + split_set_offset[sets - 1],
                             split_set_groups.end())) {
    return sets - 1;
  }
  const auto [at, added] = split_set_of_groups.try_emplace(scratch, sets);
  if (added) {
    split_set_groups.insert(split_set_groups.end(), scratch.begin(), scratch.end());
    split_set_offset.push_back(static_cast<std::uint32_t>(split_set_groups.size()));
  }
  return at->second;
}

ScheduleValidator::~ScheduleValidator() = default;

void ScheduleValidator::validate_program(std::uint32_t r) {
  check_columns(schedule_.programs(static_cast<int>(r)), r);
  if (!passes_column_checks(r)) validate_program_op_by_op(r);
}

// Every rule of validate_program_op_by_op, checked a column at a time: a
// branch-free loop over each column every op has, and one switch over the op
// codes for what depends on the kind. Answers whether the program passes; the
// op-by-op walk then names the first violation.
bool ScheduleValidator::passes_column_checks(std::uint32_t r) {
  const proto::Schedule& schedule = schedule_;
  Checked& checked = *checked_;
  const auto& program = schedule.programs(static_cast<int>(r));
  const auto n = static_cast<std::size_t>(program.stream_size());
  const std::uint32_t* stream = program.stream().data();
  const std::uint64_t* bytes = program.size_bytes().data();
  // The first three columns' checks OR into a word, which the compiler
  // vectorises (into a bool it does not). x86-64's baseline has no 64-bit
  // compare in its vectors: a size above kMaxOpBytes = 2^50 is one whose sum
  // with 2^50 - 1 reaches 2^51, or, where that sum would wrap, has its top bit.
  static_assert(limits::kMaxOpBytes == std::uint64_t{1} << 50);
  std::uint64_t over = 0;
  const auto streams = static_cast<std::uint32_t>(schedule.stream_names_size());
  for (std::size_t i = 0; i < n; ++i) over |= stream[i] >= streams;
  for (std::size_t i = 0; i < n; ++i) over |= (bytes[i] + (limits::kMaxOpBytes - 1)) >> 51 | bytes[i] >> 63;
  const std::uint32_t* dep_op = program.dep_op().data();
  const std::uint32_t* dep_on = program.dep_on().data();
  const auto deps = static_cast<std::size_t>(program.dep_op_size());
  for (std::size_t k = 0; k < deps; ++k) over |= dep_on[k] >= dep_op[k];
  if (over != 0) return false;
  bool bad = false;

  const int* code = program.code().data();
  const std::uint32_t* target = program.target().data();
  const std::uint32_t* detail = program.detail().data();
  if (!program.duration_source().empty() || !program.fixed_duration_ns().empty()) {
    for (std::size_t i = 0; i < n; ++i) {
      const OpView op = ops_of(program)[static_cast<std::uint32_t>(i)];
      const auto ns = op.fixed_duration_ns();
      switch (op.duration_source()) {
        case proto::DURATION_FROM_WORK: bad |= ns != 0; break;
        case proto::DURATION_FIXED: bad |= ns < 0 || (op.is_memory() && ns != 0); break;
        default: return false;
      }
    }
  }
  if (!program.algorithm().empty()) {
    const int* algorithm = program.algorithm().data();
    for (std::size_t i = 0; i < n; ++i) {
      const auto a = static_cast<std::uint64_t>(static_cast<std::uint32_t>(algorithm[i]));
      bad |= !in(checked.algorithms, a) || (a != proto::ALGORITHM_AUTO && code[i] != proto::OP_COLLECTIVE);
    }
  }
  if (bad) return false;

  const auto ranks = schedule.num_ranks();
  const auto works = static_cast<std::uint32_t>(schedule.shared_computes_size());
  const auto groups = static_cast<std::uint32_t>(checked.groups.groups());
  for (std::size_t i = 0; i < n; ++i) {
    switch (code[i]) {
      case proto::OP_COMPUTE: {
        const auto w = target[i];
        if (w >= works || bytes[i] != 0 || detail[i] != 0) return false;
        const auto set = checked.split_set_of_work[w];
        if (checked.split_set_checked_for[set] != r) {
          if (!checked.in_split_set(set, r)) return false;
          checked.split_set_checked_for[set] = r;
        }
        break;
      }
      case proto::OP_SEND:
      case proto::OP_RECV:
        if (target[i] >= ranks) return false;
        break;
      case proto::OP_COLLECTIVE: {
        const auto g = target[i];
        if (g >= groups || !in(checked.collective_kinds, detail[i])) return false;
        if (checked.group_checked_for[g] != r) {
          if (!checked.groups.contains(g, r)) return false;
          checked.group_checked_for[g] = r;
        }
        break;
      }
      case proto::OP_ALLOCATE:
      case proto::OP_FREE:
        if (!in(checked.memory_tags, detail[i]) || target[i] != 0) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

void ScheduleValidator::validate_program_op_by_op(std::uint32_t r) {
  const proto::Schedule& schedule = schedule_;
  const GroupMembers& groups = checked_->groups;
  Checked& checked = *checked_;
  const auto ranks = schedule.num_ranks();
  const auto streams = static_cast<std::uint32_t>(schedule.stream_names_size());
  const auto works = static_cast<std::uint32_t>(schedule.shared_computes_size());
  const auto& program = schedule.programs(static_cast<int>(r));
  check_columns(program, r);
  for (const OpView op : ops_of(program)) {
    const OpAt at{r, static_cast<int>(op.index())};
    if (op.stream() >= streams) fail(fmt::format("{}: stream {} out of range ({} streams)", at, op.stream(), streams));
    for (auto d : op.deps()) {
      if (d >= op.index()) fail(fmt::format("{}: depends on op {}, which is not earlier", at, d));
    }
    if (op.duration_source() != proto::DURATION_FROM_WORK || op.fixed_duration_ns() != 0) check_duration(op, at);
    if (!proto::CollectiveAlgorithm_IsValid(op.algorithm()))
      fail(fmt::format("{}: algorithm: unknown value {}", at, static_cast<int>(op.algorithm())));
    if (op.algorithm() != proto::ALGORITHM_AUTO && !op.is_collective())
      fail(fmt::format("{}: algorithm: only a COLLECTIVE has one, got {}", at, proto::CollectiveAlgorithm_Name(op.algorithm())));
    switch (op.code()) {
      case proto::OP_SEND:
      case proto::OP_RECV:
        if (op.peer() >= ranks) fail(fmt::format("{}: {} peer {} out of range", at, op.is_send() ? "send" : "recv", op.peer()));
        check_bytes(op.size_bytes(), "size_bytes", at);
        break;
      case proto::OP_COLLECTIVE: {
        if (op.group() >= groups.groups()) fail(fmt::format("{}: unknown group {}", at, op.group()));
        if (!groups.contains(op.group(), r)) fail(fmt::format("{}: rank {} is not a member of group {}", at, r, op.group()));
        if (op.collective_kind() == proto::COLLECTIVE_KIND_UNSPECIFIED) fail(fmt::format("{}: collective kind not set", at));
        if (!proto::CollectiveKind_IsValid(op.collective_kind()))
          fail(fmt::format("{}: collective kind (detail): unknown value {}", at, op.detail()));
        check_bytes(op.size_bytes(), "size_bytes", at);
        break;
      }
      case proto::OP_COMPUTE: {
        const auto index = op.shared_compute();
        if (index >= works) {
          fail(fmt::format("{}: shared_compute: index {} out of range ({} shared computes)", at, index, works));
        }
        const auto set = checked.split_set_of_work[index];
        if (checked.split_set_checked_for[set] != r) {
          check_split_members(schedule.shared_computes(static_cast<int>(index)), groups, at, static_cast<int>(index));
          checked.split_set_checked_for[set] = r;
        }
        if (op.size_bytes() != 0 || op.detail() != 0)
          fail(fmt::format("{}: a COMPUTE op has no size_bytes or detail, got {} and {}", at, op.size_bytes(), op.detail()));
        break;
      }
      case proto::OP_ALLOCATE:
      case proto::OP_FREE:
        if (!proto::MemoryTag_IsValid(op.memory_tag()))
          fail(fmt::format("{}: memory tag (detail): unknown value {}", at, op.detail()));
        if (op.target() != 0) fail(fmt::format("{}: a MEMORY op has no target, got {}", at, op.target()));
        check_bytes(op.size_bytes(), "size_bytes", at);
        break;
      case proto::OP_CODE_UNSPECIFIED:
        fail(fmt::format("{}: op kind not set", at));
      default:
        fail(fmt::format("{}: code: unknown value {}", at, static_cast<int>(op.code())));
    }
  }
}

void validate_schedule(const proto::Schedule& schedule) {
  ScheduleValidator validator(schedule);
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) validator.validate_program(r);
}

}  // namespace eppsim
