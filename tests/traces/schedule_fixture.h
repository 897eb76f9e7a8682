#pragma once
// Hand-built schedules for the tests of traces/executor (the planners' builder
// lives in sim/, which traces/ may not use).
#include <cstdint>
#include <initializer_list>
#include <string>

#include "traces/schedule.pb.h"

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

  std::uint32_t compute(std::uint32_t rank, std::uint32_t stream, std::initializer_list<std::uint32_t> deps = {}) {
    auto* op = add(rank, stream, deps);
    op->mutable_compute()->set_phase(proto::FORWARD);
    op->mutable_compute()->set_layer_count(1);
    return last(rank);
  }
  std::uint32_t send(std::uint32_t rank, std::uint32_t stream, std::uint32_t peer, std::uint64_t bytes, std::uint32_t tag,
                     std::initializer_list<std::uint32_t> deps = {}) {
    auto* s = add(rank, stream, deps)->mutable_send();
    s->set_peer(peer);
    s->set_size_bytes(bytes);
    s->set_tag(tag);
    return last(rank);
  }
  std::uint32_t recv(std::uint32_t rank, std::uint32_t stream, std::uint32_t peer, std::uint64_t bytes, std::uint32_t tag,
                     std::initializer_list<std::uint32_t> deps = {}) {
    auto* r = add(rank, stream, deps)->mutable_recv();
    r->set_peer(peer);
    r->set_size_bytes(bytes);
    r->set_tag(tag);
    return last(rank);
  }
  std::uint32_t collective(std::uint32_t rank, std::uint32_t stream, std::uint32_t group, std::uint64_t bytes,
                           proto::CollectiveKind kind = proto::ALL_REDUCE, std::initializer_list<std::uint32_t> deps = {}) {
    auto* c = add(rank, stream, deps)->mutable_collective();
    c->set_kind(kind);
    c->set_group(group);
    c->set_size_bytes(bytes);
    return last(rank);
  }
  std::uint32_t memory(std::uint32_t rank, std::uint32_t stream, bool allocate, std::uint64_t bytes,
                       std::initializer_list<std::uint32_t> deps = {}) {
    auto* m = add(rank, stream, deps)->mutable_memory();
    m->set_allocate(allocate);
    m->set_size_bytes(bytes);
    m->set_tag(proto::ACTIVATIONS);
    return last(rank);
  }

  proto::Op& op(std::uint32_t rank, std::uint32_t index) {
    return *s_.mutable_programs(static_cast<int>(rank))->mutable_ops(static_cast<int>(index));
  }
  proto::Schedule& schedule() { return s_; }

 private:
  proto::Op* add(std::uint32_t rank, std::uint32_t stream, std::initializer_list<std::uint32_t> deps) {
    auto* op = s_.mutable_programs(static_cast<int>(rank))->add_ops();
    op->set_stream(stream);
    for (auto d : deps) op->add_deps(d);
    return op;
  }
  std::uint32_t last(std::uint32_t rank) const {
    return static_cast<std::uint32_t>(s_.programs(static_cast<int>(rank)).ops_size() - 1);
  }

  proto::Schedule s_;
};

}  // namespace eppsim::testing
