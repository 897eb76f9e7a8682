#include "sim/plan/schedule_builder.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "base/interrupt.h"
#include "base/memory_limit.h"
#include "schedule/model_shape.h"
#include "schedule/program_ops.h"
#include "schedule/schedule_schema.h"
#include "traces/trace_report.h"

namespace eppsim {

WorkSplit& WorkSplit::add(proto::SplitKind kind, std::uint32_t group, std::uint32_t group_size) {
  if (group_size <= 1) return *this;
  proto::ComputeSplit split;
  split.set_kind(kind);
  split.set_group(group);
  splits.push_back(split);
  shards *= group_size;
  return *this;
}

void WorkSplit::apply(proto::ComputeOp& op) const {
  op.clear_splits();
  for (const auto& s : splits) *op.add_splits() = s;
  if (shards > 1) {
    op.set_shards(shards);
  } else {
    op.clear_shards();
  }
}

ScheduleBuilder::ScheduleBuilder(std::uint32_t num_ranks, std::string scenario, std::string strategy,
                                 const std::optional<TransformerSpec>& model) {
  auto* header = schedule_.mutable_header();
  header->set_schema_version(kScheduleSchemaVersion);
  header->set_producer(fmt::format("eppsim {} planner {}", eppsim_version(), strategy));
  if (model) *header->mutable_model() = to_model_shape(*model);
  schedule_.set_scenario(std::move(scenario));
  schedule_.set_strategy(std::move(strategy));
  schedule_.set_num_ranks(num_ranks);
  for (std::uint32_t r = 0; r < num_ranks; ++r) {
    schedule_.add_placement();
    schedule_.add_programs();
  }
  left_.assign(num_ranks, false);
}

void ScheduleBuilder::place(std::uint32_t rank, std::uint32_t node, std::uint32_t local_gpu) {
  auto* p = schedule_.mutable_placement(static_cast<int>(rank));
  p->set_node(node);
  p->set_local_gpu(local_gpu);
}

std::uint32_t ScheduleBuilder::stream(std::string_view name) {
  auto [it, inserted] = stream_ids_.try_emplace(std::string(name), schedule_.stream_names_size());
  if (inserted) schedule_.add_stream_names(std::string(name));
  return it->second;
}

std::uint32_t ScheduleBuilder::add_group(std::string name, std::vector<std::uint32_t> ranks) {
  auto* g = schedule_.add_groups();
  const auto id = static_cast<std::uint32_t>(schedule_.groups_size() - 1);
  g->set_id(id);
  g->set_name(std::move(name));
  for (auto r : ranks) g->add_ranks(r);
  return id;
}

std::uint32_t ScheduleBuilder::group_size(std::uint32_t group) const {
  if (group >= static_cast<std::uint32_t>(schedule_.groups_size()))
    throw std::logic_error(fmt::format("ScheduleBuilder: group {} does not exist", group));
  return static_cast<std::uint32_t>(schedule_.groups(static_cast<int>(group)).ranks_size());
}

OpIndex ScheduleBuilder::append(std::uint32_t rank, const OpFields& op, std::span<const OpIndex> deps) {
  if (rank >= num_ranks()) throw std::logic_error(fmt::format("ScheduleBuilder: rank {} out of range", rank));
  if (rank != last_rank_ && !left_[last_rank_]) {
    left_[last_rank_] = true;
    shrink_to_fit(*schedule_.mutable_programs(static_cast<int>(last_rank_)));
  }
  last_rank_ = rank;
  auto& program = *schedule_.mutable_programs(static_cast<int>(rank));
  const auto index = static_cast<OpIndex>(program.stream_size());
  for (auto d : deps) {
    if (d >= index) throw std::logic_error(fmt::format("ScheduleBuilder: rank {} op {} depends on later op {}", rank, index, d));
  }
  // SIGINT and SIGTERM (base/interrupt.h) every 2^14 ops, and the memory guard
  // (base/memory_limit.h) every 2^20: a plan that grows past the limit is
  // refused while it is built.
  if ((++ops_ & ((std::uint64_t{1} << 14) - 1)) == 0 && interrupt_signal() != 0) {
    abandon(schedule_);
    throw_if_interrupted();
  }
  if ((ops_ & ((std::uint64_t{1} << 20) - 1)) == 0) {
    check_memory_estimate(fmt::format("planning {} ({} ops built so far)", schedule_.strategy(), ops_), held_memory_bytes(),
                          "plan fewer ops (fewer slices, chunks or micro-batches per rank) or fewer ranks, or raise "
                          "--max-memory");
  }
  return add_op(program, op, deps);
}

proto::Schedule ScheduleBuilder::finish() {
  if (!left_.empty() && !left_[last_rank_]) shrink_to_fit(*schedule_.mutable_programs(static_cast<int>(last_rank_)));
  return std::move(schedule_);
}

OpIndex ScheduleBuilder::compute(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps,
                                 proto::ComputeOp op) {
  return append(rank, OpFields::compute(stream, shared_computes_.index_of(schedule_, std::move(op))), deps);
}

std::uint32_t ScheduleBuilder::share(proto::ComputeOp op) {
  const auto index = static_cast<std::uint32_t>(schedule_.shared_computes_size());
  *schedule_.add_shared_computes() = std::move(op);
  return index;
}

OpIndex ScheduleBuilder::compute_shared(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps,
                                        std::uint32_t shared) {
  if (shared >= static_cast<std::uint32_t>(schedule_.shared_computes_size())) {
    throw std::logic_error(fmt::format("ScheduleBuilder: rank {}: shared compute {} was not listed", rank, shared));
  }
  return append(rank, OpFields::compute(stream, shared), deps);
}

OpIndex ScheduleBuilder::send(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps,
                              std::uint32_t peer, std::uint64_t size_bytes, std::uint32_t tag) {
  return append(rank, OpFields::send(stream, peer, size_bytes, tag), deps);
}

OpIndex ScheduleBuilder::recv(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps,
                              std::uint32_t peer, std::uint64_t size_bytes, std::uint32_t tag) {
  return append(rank, OpFields::recv(stream, peer, size_bytes, tag), deps);
}

OpIndex ScheduleBuilder::collective(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps,
                                    proto::CollectiveKind kind, std::uint32_t group, std::uint64_t size_bytes,
                                    proto::CollectiveAlgorithm algorithm) {
  return append(rank, OpFields::collective(stream, kind, group, size_bytes, algorithm), deps);
}

OpIndex ScheduleBuilder::memory(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps,
                                bool allocate, std::uint64_t size_bytes, proto::MemoryTag tag) {
  return append(rank, OpFields::memory(stream, allocate, size_bytes, tag), deps);
}

PipelineStreams add_pipeline_streams(ScheduleBuilder& builder) {
  PipelineStreams streams{};
  streams.compute = builder.stream("compute");
  streams.recv_prev = builder.stream("recv_prev");
  streams.send_next = builder.stream("send_next");
  streams.recv_next = builder.stream("recv_next");
  streams.send_prev = builder.stream("send_prev");
  streams.comm = builder.stream("comm");
  return streams;
}

std::vector<std::uint64_t> sequential_peak_memory(const proto::Schedule& schedule) {
  std::vector<std::uint64_t> peaks;
  peaks.reserve(static_cast<std::size_t>(schedule.programs_size()));
  for (const auto& program : schedule.programs()) {
    std::uint64_t in_use = 0;
    std::uint64_t peak = 0;
    for (const OpView op : ops_of(program)) {
      if (op.code() == proto::OP_ALLOCATE) {
        in_use += op.size_bytes();
        peak = std::max(peak, in_use);
      } else if (op.code() == proto::OP_FREE) {
        in_use -= std::min(in_use, op.size_bytes());
      }
    }
    peaks.push_back(peak);
  }
  return peaks;
}

}  // namespace eppsim
