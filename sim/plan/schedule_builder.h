#pragma once
// Appends typed ops to per-rank programs and keeps the stream and group tables.
// Planners use it so that every Schedule is built the same way.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/transformer_spec.h"
#include "schedule/program_ops.h"
#include "proto/schedule.pb.h"
#include "schedule/shared_compute.h"

namespace eppsim {

// Index of an op in its rank's program.
using OpIndex = std::uint32_t;

// How a chunk's work is shared (ComputeOp.splits): one entry per kind of
// parallelism with the group that shares it; `shards` is the product of the
// groups' sizes. Empty: the whole chunk runs on each rank.
struct WorkSplit {
  std::vector<proto::ComputeSplit> splits;
  std::uint32_t shards = 1;

  // Adds a split over `group` of `group_size` ranks (a size of 1 adds nothing).
  WorkSplit& add(proto::SplitKind kind, std::uint32_t group, std::uint32_t group_size);
  // Sets the op's splits and shards.
  void apply(proto::ComputeOp& op) const;
};

class ScheduleBuilder {
 public:
  // The Schedule's header carries kScheduleSchemaVersion, the producer
  // ("eppsim <version> planner <strategy>") and, when given, the model's shape
  // (hand-built schedules without a model leave it out).
  ScheduleBuilder(std::uint32_t num_ranks, std::string scenario, std::string strategy,
                  const std::optional<TransformerSpec>& model = std::nullopt);

  void place(std::uint32_t rank, std::uint32_t node, std::uint32_t local_gpu);
  std::uint32_t stream(std::string_view name);
  std::uint32_t add_group(std::string name, std::vector<std::uint32_t> ranks);
  std::uint32_t group_size(std::uint32_t group) const;

  // The op's work goes to the Schedule's shared_computes once, whichever ranks
  // run it (schedule/shared_compute.h).
  OpIndex compute(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps, proto::ComputeOp op);
  // The same in two steps, for a planner that knows which ranks run one work:
  // share() lists it (without looking for an equal one already listed) and
  // returns its index, compute_shared() adds an op running it.
  std::uint32_t share(proto::ComputeOp op);
  OpIndex compute_shared(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps, std::uint32_t shared);
  OpIndex send(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps, std::uint32_t peer,
               std::uint64_t size_bytes, std::uint32_t tag);
  OpIndex recv(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps, std::uint32_t peer,
               std::uint64_t size_bytes, std::uint32_t tag);
  OpIndex collective(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps,
                     proto::CollectiveKind kind, std::uint32_t group, std::uint64_t size_bytes,
                     proto::CollectiveAlgorithm algorithm = proto::ALGORITHM_AUTO);
  OpIndex memory(std::uint32_t rank, std::uint32_t stream, std::span<const OpIndex> deps, bool allocate,
                 std::uint64_t size_bytes, proto::MemoryTag tag);

  std::uint32_t num_ranks() const { return static_cast<std::uint32_t>(schedule_.programs_size()); }
  proto::ScheduleSummary* summary() { return schedule_.mutable_summary(); }
  // Marks the replicas identical: the planner writes replica 0's programs
  // alone (schedule/identical_replicas.h).
  void identical_replicas(std::uint32_t copies, std::uint32_t stride) {
    schedule_.mutable_identical_replicas()->set_copies(copies);
    schedule_.mutable_identical_replicas()->set_stride(stride);
  }
  const proto::Schedule& schedule() const { return schedule_; }
  proto::Schedule finish();

 private:
  OpIndex append(std::uint32_t rank, const OpFields& op, std::span<const OpIndex> deps);

  proto::Schedule schedule_;
  std::uint64_t ops_ = 0;  // appended so far
  // The rank appended to last, and the ranks left once: a planner that builds
  // rank by rank has each rank's columns shrunk to fit as it moves on (once a
  // rank, so that one interleaving ranks copies each at most once).
  std::uint32_t last_rank_ = 0;
  std::vector<bool> left_;
  std::unordered_map<std::string, std::uint32_t> stream_ids_;
  SharedComputes shared_computes_;
};

// The streams of a 1F1B pipeline rank: compute and memory ops, pre-posted
// activation receives and sends, gradient receives and sends, collectives.
struct PipelineStreams {
  std::uint32_t compute, recv_prev, send_next, recv_next, send_prev, comm;
};
// Creates them in that order (stream ids 0..5 in a fresh builder).
PipelineStreams add_pipeline_streams(ScheduleBuilder& builder);

// Largest bytes in use on each rank when its MEMORY ops run in program order
// (the order of the stream that carries them): the planner's memory estimate.
std::vector<std::uint64_t> sequential_peak_memory(const proto::Schedule& schedule);

}  // namespace eppsim
