#pragma once
// Hand-built schedules for the tests of schedule/executor (the planners' builder
// lives in sim/, which traces/ may not use).
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>

#include "schedule/program_ops.h"
#include "proto/schedule.pb.h"
#include "schedule/shared_compute.h"

namespace eppsim::testing {

class HandSchedule {
 public:
  HandSchedule(std::uint32_t ranks, std::initializer_list<const char*> streams = {"compute", "comm"}) {
    s_.set_scenario("hand");
    s_.set_strategy("hand");
    s_.set_num_ranks(ranks);
    for (auto name : streams) s_.add_stream_names(name);
    for (std::uint32_t r = 0; r < ranks; ++r) s_.add_programs();
  }

  std::uint32_t group(std::initializer_list<std::uint32_t> ranks) {
    auto* g = s_.add_groups();
    g->set_id(static_cast<std::uint32_t>(s_.groups_size() - 1));
    for (auto r : ranks) g->add_ranks(r);
    return g->id();
  }

  // The work compute() runs unless told otherwise: a forward pass over one layer.
  static proto::ComputeOp forward_layer() {
    proto::ComputeOp work;
    work.set_phase(proto::FORWARD);
    work.set_layer_count(1);
    return work;
  }

  // A COMPUTE op running forward_layer().
  std::uint32_t compute(std::uint32_t rank, std::uint32_t stream, std::initializer_list<std::uint32_t> deps = {}) {
    return compute(rank, stream, deps, forward_layer());
  }
  // A COMPUTE op running `work` (deps before the work, as ScheduleBuilder::compute
  // has them). Equal works are listed once in shared_computes however many ops
  // run them; a test that edits an entry there changes it for each of them.
  std::uint32_t compute(std::uint32_t rank, std::uint32_t stream, std::initializer_list<std::uint32_t> deps,
                        proto::ComputeOp work) {
    return add(rank, OpFields::compute(stream, works_.index_of(s_, std::move(work))), deps);
  }
  std::uint32_t send(std::uint32_t rank, std::uint32_t stream, std::uint32_t peer, std::uint64_t bytes, std::uint32_t tag,
                     std::initializer_list<std::uint32_t> deps = {}) {
    return add(rank, OpFields::send(stream, peer, bytes, tag), deps);
  }
  std::uint32_t recv(std::uint32_t rank, std::uint32_t stream, std::uint32_t peer, std::uint64_t bytes, std::uint32_t tag,
                     std::initializer_list<std::uint32_t> deps = {}) {
    return add(rank, OpFields::recv(stream, peer, bytes, tag), deps);
  }
  std::uint32_t collective(std::uint32_t rank, std::uint32_t stream, std::uint32_t group, std::uint64_t bytes,
                           proto::CollectiveKind kind = proto::ALL_REDUCE, std::initializer_list<std::uint32_t> deps = {},
                           proto::CollectiveAlgorithm algorithm = proto::ALGORITHM_AUTO) {
    return add(rank, OpFields::collective(stream, kind, group, bytes, algorithm), deps);
  }
  std::uint32_t memory(std::uint32_t rank, std::uint32_t stream, bool allocate, std::uint64_t bytes,
                       std::initializer_list<std::uint32_t> deps = {}) {
    return add(rank, OpFields::memory(stream, allocate, bytes, proto::ACTIVATIONS), deps);
  }

  // Gives an op a fixed duration.
  void fix_duration(std::uint32_t rank, std::uint32_t index, std::int64_t duration_ns) {
    set_duration(program(rank), index, proto::DURATION_FIXED, duration_ns);
  }
  proto::RankProgram& program(std::uint32_t rank) { return *s_.mutable_programs(static_cast<int>(rank)); }
  proto::Schedule& schedule() { return s_; }

 private:
  std::uint32_t add(std::uint32_t rank, const OpFields& op, std::initializer_list<std::uint32_t> deps) {
    return add_op(program(rank), op, std::span<const std::uint32_t>(deps.begin(), deps.size()));
  }

  SharedComputes works_;
  proto::Schedule s_;
};

// The schedule in the form before schema version 5: each op a message, its
// compute work inline (what convert_op_messages reads).
inline proto::Schedule in_op_messages(const proto::Schedule& schedule) {
  proto::Schedule old = schedule;
  old.clear_shared_computes();
  for (int r = 0; r < old.programs_size(); ++r) {
    auto& program = *old.mutable_programs(r);
    program.Clear();
    for (const OpView v : ops_of(schedule.programs(r))) {
      auto& op = *program.add_ops();
      op.set_stream(v.stream());
      for (const auto d : v.deps()) op.add_deps(d);
      op.set_duration_source(v.duration_source());
      op.set_fixed_duration_ns(v.fixed_duration_ns());
      if (v.is_compute()) {
        *op.mutable_compute() = schedule.shared_computes(static_cast<int>(v.shared_compute()));
      } else if (v.is_send()) {
        op.mutable_send()->set_peer(v.peer());
        op.mutable_send()->set_size_bytes(v.size_bytes());
        op.mutable_send()->set_tag(v.tag());
      } else if (v.is_recv()) {
        op.mutable_recv()->set_peer(v.peer());
        op.mutable_recv()->set_size_bytes(v.size_bytes());
        op.mutable_recv()->set_tag(v.tag());
      } else if (v.is_collective()) {
        op.mutable_collective()->set_kind(v.collective_kind());
        op.mutable_collective()->set_group(v.group());
        op.mutable_collective()->set_size_bytes(v.size_bytes());
        op.mutable_collective()->set_algorithm(v.algorithm());
      } else if (v.is_memory()) {
        op.mutable_memory()->set_allocate(v.allocate());
        op.mutable_memory()->set_size_bytes(v.size_bytes());
        op.mutable_memory()->set_tag(v.memory_tag());
      }
    }
  }
  return old;
}

}  // namespace eppsim::testing
