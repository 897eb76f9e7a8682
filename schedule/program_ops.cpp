#include "schedule/program_ops.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/errors.h"
#include "schedule/schedule_schema.h"
#include "schedule/shared_compute.h"

namespace eppsim {

std::span<const std::uint32_t> OpView::searched_deps() const {
  const auto& dep_op = program_->dep_op();
  const auto range = std::equal_range(dep_op.begin(), dep_op.end(), index_);
  if (range.first == range.second) return {};
  return {program_->dep_on().data() + (range.first - dep_op.begin()), static_cast<std::size_t>(range.second - range.first)};
}

std::uint64_t op_count(const proto::Schedule& schedule) {
  std::uint64_t ops = 0;
  for (const auto& program : schedule.programs()) ops += static_cast<std::uint64_t>(program.stream_size());
  return ops;
}

OpFields OpFields::compute(std::uint32_t stream, std::uint32_t shared_compute) {
  return {.stream = stream, .code = proto::OP_COMPUTE, .target = shared_compute};
}

OpFields OpFields::send(std::uint32_t stream, std::uint32_t peer, std::uint64_t size_bytes, std::uint32_t tag) {
  return {.stream = stream, .code = proto::OP_SEND, .target = peer, .size_bytes = size_bytes, .detail = tag};
}

OpFields OpFields::recv(std::uint32_t stream, std::uint32_t peer, std::uint64_t size_bytes, std::uint32_t tag) {
  return {.stream = stream, .code = proto::OP_RECV, .target = peer, .size_bytes = size_bytes, .detail = tag};
}

OpFields OpFields::collective(std::uint32_t stream, proto::CollectiveKind kind, std::uint32_t group,
                              std::uint64_t size_bytes, proto::CollectiveAlgorithm algorithm) {
  return {.stream = stream,
          .code = proto::OP_COLLECTIVE,
          .target = group,
          .size_bytes = size_bytes,
          .detail = static_cast<std::uint32_t>(kind),
          .algorithm = algorithm};
}

OpFields OpFields::memory(std::uint32_t stream, bool allocate, std::uint64_t size_bytes, proto::MemoryTag tag) {
  return {.stream = stream,
          .code = allocate ? proto::OP_ALLOCATE : proto::OP_FREE,
          .size_bytes = size_bytes,
          .detail = static_cast<std::uint32_t>(tag)};
}

OpFields& OpFields::fixed(std::int64_t duration_ns) {
  duration_source = proto::DURATION_FIXED;
  fixed_duration_ns = duration_ns;
  return *this;
}

OpFields fields_of(OpView op) {
  return {op.stream(),    op.code(),      op.target(), op.size_bytes(), op.detail(), op.algorithm(),
          op.duration_source(), op.fixed_duration_ns()};
}

namespace {

// Fills an optional column up to the program's ops before its first entry.
template <typename Column, typename Value>
void fill_optional(Column& column, int ops, Value empty) {
  if (column.empty()) {
    column.Reserve(ops + 1);
    for (int i = 0; i < ops; ++i) column.Add(empty);
  }
}

}  // namespace

std::uint32_t add_op(proto::RankProgram& program, const OpFields& op, std::span<const std::uint32_t> deps) {
  const int index = program.stream_size();
  program.add_stream(op.stream);
  program.add_code(op.code);
  program.add_target(op.target);
  program.add_size_bytes(op.size_bytes);
  program.add_detail(op.detail);
  if (op.algorithm != proto::ALGORITHM_AUTO || !program.algorithm().empty()) {
    fill_optional(*program.mutable_algorithm(), index, proto::ALGORITHM_AUTO);
    program.add_algorithm(op.algorithm);
  }
  if (op.duration_source != proto::DURATION_FROM_WORK || op.fixed_duration_ns != 0 ||
      !program.duration_source().empty()) {
    fill_optional(*program.mutable_duration_source(), index, proto::DURATION_FROM_WORK);
    fill_optional(*program.mutable_fixed_duration_ns(), index, std::int64_t{0});
    program.add_duration_source(op.duration_source);
    program.add_fixed_duration_ns(op.fixed_duration_ns);
  }
  for (const auto d : deps) {
    program.add_dep_op(static_cast<std::uint32_t>(index));
    program.add_dep_on(d);
  }
  return static_cast<std::uint32_t>(index);
}

namespace {

template <typename T>
void shrink_column(google::protobuf::RepeatedField<T>& column) {
  if (column.Capacity() == column.size()) return;
  google::protobuf::RepeatedField<T> tight(column);  // allocates its size, no more
  column.Swap(&tight);
}

}  // namespace

void shrink_to_fit(proto::RankProgram& program) {
  shrink_column(*program.mutable_stream());
  shrink_column(*program.mutable_code());
  shrink_column(*program.mutable_target());
  shrink_column(*program.mutable_size_bytes());
  shrink_column(*program.mutable_detail());
  shrink_column(*program.mutable_algorithm());
  shrink_column(*program.mutable_duration_source());
  shrink_column(*program.mutable_fixed_duration_ns());
  shrink_column(*program.mutable_dep_op());
  shrink_column(*program.mutable_dep_on());
}

void set_duration(proto::RankProgram& program, std::uint32_t index, proto::DurationSource source,
                  std::int64_t fixed_duration_ns) {
  if (program.duration_source().empty() && source == proto::DURATION_FROM_WORK && fixed_duration_ns == 0) return;
  const int ops = program.stream_size();
  fill_optional(*program.mutable_duration_source(), ops, proto::DURATION_FROM_WORK);
  fill_optional(*program.mutable_fixed_duration_ns(), ops, std::int64_t{0});
  program.set_duration_source(static_cast<int>(index), source);
  program.set_fixed_duration_ns(static_cast<int>(index), fixed_duration_ns);
}

std::size_t convert_op_messages(proto::Schedule& schedule, std::string_view where) {
  std::size_t converted = 0;
  SharedComputes works(schedule);
  for (int r = 0; r < schedule.programs_size(); ++r) {
    auto& program = *schedule.mutable_programs(r);
    if (program.ops().empty()) continue;
    if (program.stream_size() > 0) {
      throw InputError(fmt::format("{}: programs[{}].ops: a program lists its ops in columns (schema version 5) or, "
                                   "as schedules written before version 5 did, as messages in ops, not both",
                                   where, r));
    }
    std::vector<std::uint32_t> deps;
    for (auto& o : *program.mutable_ops()) {
      OpFields f;
      switch (o.kind_case()) {
        case proto::Op::kCompute: f = OpFields::compute(o.stream(), works.index_of(schedule, std::move(*o.mutable_compute()))); break;
        case proto::Op::kSharedCompute: f = OpFields::compute(o.stream(), o.shared_compute()); break;
        case proto::Op::kSend: f = OpFields::send(o.stream(), o.send().peer(), o.send().size_bytes(), o.send().tag()); break;
        case proto::Op::kRecv: f = OpFields::recv(o.stream(), o.recv().peer(), o.recv().size_bytes(), o.recv().tag()); break;
        case proto::Op::kCollective:
          f = OpFields::collective(o.stream(), o.collective().kind(), o.collective().group(), o.collective().size_bytes(),
                                   o.collective().algorithm());
          break;
        case proto::Op::kMemory:
          f = OpFields::memory(o.stream(), o.memory().allocate(), o.memory().size_bytes(), o.memory().tag());
          break;
        case proto::Op::KIND_NOT_SET: f.stream = o.stream(); break;  // validation names it
      }
      f.duration_source = o.duration_source();
      f.fixed_duration_ns = o.fixed_duration_ns();
      deps.assign(o.deps().begin(), o.deps().end());
      add_op(program, f, deps);
      ++converted;
    }
    program.clear_ops();
  }
  // What it holds now is version 5's form, whatever version wrote the file.
  if (converted > 0) schedule.mutable_header()->set_schema_version(kScheduleSchemaVersion);
  return converted;
}

}  // namespace eppsim
