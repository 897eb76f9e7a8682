#pragma once
// A rank's ops (schedule.proto RankProgram, schema version 5): one packed
// column per field, entry i of every per-op column being op i, so that a step
// of tens of millions of ops is a few arrays per rank rather than a message
// per op (docs/dev/speed-history.md, "What moved the epp figures"). Readers see
// each op through OpView, whose accessors name what the columns hold for its
// kind; writers append OpFields (add_op). A Schedule of schema version 4 or
// older, a message per op, is converted as it is read (convert_op_messages).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string_view>

#include "proto/schedule.pb.h"

namespace eppsim {

// Op `index` of a program, with its dependencies.
class OpView {
 public:
  // The op's deps are program.dep_on(dep_begin .. dep_end - 1).
  OpView(const proto::RankProgram& program, std::uint32_t index, int dep_begin, int dep_end)
      : program_(&program), index_(index), dep_begin_(dep_begin), dep_end_(dep_end) {}
  // Its deps are found when asked for (a binary search of dep_op).
  OpView(const proto::RankProgram& program, std::uint32_t index) : program_(&program), index_(index) {}

  std::uint32_t index() const { return index_; }
  std::uint32_t stream() const { return program_->stream(static_cast<int>(index_)); }
  proto::OpCode code() const { return program_->code(static_cast<int>(index_)); }
  bool is_compute() const { return code() == proto::OP_COMPUTE; }
  bool is_send() const { return code() == proto::OP_SEND; }
  bool is_recv() const { return code() == proto::OP_RECV; }
  bool is_collective() const { return code() == proto::OP_COLLECTIVE; }
  bool is_memory() const { return code() == proto::OP_ALLOCATE || code() == proto::OP_FREE; }
  // Earlier ops of the same rank it waits for, besides its stream's previous op.
  std::span<const std::uint32_t> deps() const {
    if (dep_begin_ < 0) return searched_deps();
    if (dep_begin_ == dep_end_) return {};  // (an empty column's data() may be null)
    return {program_->dep_on().data() + dep_begin_, static_cast<std::size_t>(dep_end_ - dep_begin_)};
  }

  // COMPUTE: its work, an index into Schedule.shared_computes.
  std::uint32_t shared_compute() const { return target(); }
  // SEND / RECV: the other rank and the tag.
  std::uint32_t peer() const { return target(); }
  std::uint32_t tag() const { return detail(); }
  // COLLECTIVE.
  std::uint32_t group() const { return target(); }
  proto::CollectiveKind collective_kind() const { return static_cast<proto::CollectiveKind>(detail()); }
  proto::CollectiveAlgorithm algorithm() const {
    return program_->algorithm().empty() ? proto::ALGORITHM_AUTO : program_->algorithm(static_cast<int>(index_));
  }
  // ALLOCATE / FREE.
  bool allocate() const { return code() == proto::OP_ALLOCATE; }
  proto::MemoryTag memory_tag() const { return static_cast<proto::MemoryTag>(detail()); }
  // SEND / RECV / COLLECTIVE / ALLOCATE / FREE (0 for COMPUTE).
  std::uint64_t size_bytes() const { return program_->size_bytes(static_cast<int>(index_)); }

  proto::DurationSource duration_source() const {
    return program_->duration_source().empty() ? proto::DURATION_FROM_WORK
                                               : program_->duration_source(static_cast<int>(index_));
  }
  std::int64_t fixed_duration_ns() const {
    return program_->fixed_duration_ns().empty() ? 0 : program_->fixed_duration_ns(static_cast<int>(index_));
  }

  // The raw columns (validation reads them before the meanings above apply).
  std::uint32_t target() const { return program_->target(static_cast<int>(index_)); }
  std::uint32_t detail() const { return program_->detail(static_cast<int>(index_)); }

 private:
  std::span<const std::uint32_t> searched_deps() const;
  const proto::RankProgram* program_;
  std::uint32_t index_;
  int dep_begin_ = -1, dep_end_ = -1;  // -1: not looked up
};

// The ops of a program, in order: `for (const OpView op : ops_of(program))`
// walks the dependency columns once; `ops_of(program)[i]` finds op i's by
// binary search, when its deps() are asked for.
class ProgramOps {
 public:
  explicit ProgramOps(const proto::RankProgram& program) : program_(&program) {}

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = OpView;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = OpView;
    iterator() = default;
    iterator(const proto::RankProgram* program, std::uint32_t index, int dep)
        : program_(program), index_(index), dep_(dep), dep_end_(deps_end()) {}
    OpView operator*() const { return {*program_, index_, dep_, dep_end_}; }
    iterator& operator++() {
      dep_ = dep_end_;
      ++index_;
      dep_end_ = deps_end();
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const iterator& other) const { return index_ == other.index_; }

   private:
    // The end of op index_'s entries in dep_op, which start at dep_.
    int deps_end() const {
      const std::uint32_t* dep_op = program_->dep_op().data();
      const int entries = program_->dep_op_size();
      int end = dep_;
      while (end < entries && dep_op[end] == index_) ++end;
      return end;
    }
    const proto::RankProgram* program_ = nullptr;
    std::uint32_t index_ = 0;
    int dep_ = 0, dep_end_ = 0;  // op index_'s deps: dep_on[dep_ .. dep_end_)
  };

  std::uint32_t size() const { return static_cast<std::uint32_t>(program_->stream_size()); }
  bool empty() const { return size() == 0; }
  OpView operator[](std::uint32_t index) const { return {*program_, index}; }
  iterator begin() const { return {program_, 0, 0}; }
  iterator end() const { return {program_, size(), program_->dep_op_size()}; }

 private:
  const proto::RankProgram* program_;
};

inline ProgramOps ops_of(const proto::RankProgram& program) { return ProgramOps(program); }
inline ProgramOps ops_of(const proto::Schedule& schedule, std::uint32_t rank) {
  return ProgramOps(schedule.programs(static_cast<int>(rank)));
}
// The view would outlive a temporary program or schedule.
ProgramOps ops_of(proto::RankProgram&& program) = delete;
ProgramOps ops_of(proto::Schedule&& schedule, std::uint32_t rank) = delete;

// The ops of every rank.
std::uint64_t op_count(const proto::Schedule& schedule);

// One op's fields, for writers; the named constructors set what each kind uses.
struct OpFields {
  std::uint32_t stream = 0;
  proto::OpCode code = proto::OP_CODE_UNSPECIFIED;
  std::uint32_t target = 0;
  std::uint64_t size_bytes = 0;
  std::uint32_t detail = 0;
  proto::CollectiveAlgorithm algorithm = proto::ALGORITHM_AUTO;
  proto::DurationSource duration_source = proto::DURATION_FROM_WORK;
  std::int64_t fixed_duration_ns = 0;

  static OpFields compute(std::uint32_t stream, std::uint32_t shared_compute);
  static OpFields send(std::uint32_t stream, std::uint32_t peer, std::uint64_t size_bytes, std::uint32_t tag);
  static OpFields recv(std::uint32_t stream, std::uint32_t peer, std::uint64_t size_bytes, std::uint32_t tag);
  static OpFields collective(std::uint32_t stream, proto::CollectiveKind kind, std::uint32_t group,
                             std::uint64_t size_bytes, proto::CollectiveAlgorithm algorithm = proto::ALGORITHM_AUTO);
  static OpFields memory(std::uint32_t stream, bool allocate, std::uint64_t size_bytes, proto::MemoryTag tag);
  // The same op with a fixed duration (DURATION_FIXED).
  OpFields& fixed(std::int64_t duration_ns);
};

OpFields fields_of(OpView op);

// Appends an op depending on `deps` (earlier ops of the program); returns its index.
std::uint32_t add_op(proto::RankProgram& program, const OpFields& op, std::span<const std::uint32_t> deps = {});

// Gives back each column's room beyond its size (a column grows by doubling:
// a third of a large Schedule's memory was that room). One copy of the program.
void shrink_to_fit(proto::RankProgram& program);

// Sets where op `index`'s duration comes from (DURATION_FROM_WORK with 0, or
// DURATION_FIXED with the duration).
void set_duration(proto::RankProgram& program, std::uint32_t index, proto::DurationSource source,
                  std::int64_t fixed_duration_ns);

// A Schedule of the form before version 5 (RankProgram.ops, a message per op):
// its ops move into the columns, in order; a compute op's own work is listed
// in Schedule.shared_computes (once for equal works, an entry already there
// included), and the header then says version 5. Throws InputError naming
// `where` for a program that has both forms. Returns how many ops it converted.
std::size_t convert_op_messages(proto::Schedule& schedule, std::string_view where);

}  // namespace eppsim
