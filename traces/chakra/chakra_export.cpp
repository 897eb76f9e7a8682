#include "traces/chakra/chakra_export.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "traces/chakra/chakra_attributes.h"
#include "schedule/schedule_validation.h"
#include "base/interrupt.h"
#include "base/proto_io.h"
#include "schedule/shared_compute.h"

namespace eppsim {
namespace {

namespace names = chakra_names;

// The Chakra schema version ASTRA-sim's example traces carry.
constexpr std::string_view kChakraVersion = "0.0.4";

chakra::CollectiveCommType comm_type(proto::CollectiveKind kind) {
  switch (kind) {
    case proto::ALL_GATHER: return chakra::ALL_GATHER;
    case proto::REDUCE_SCATTER: return chakra::REDUCE_SCATTER;
    case proto::ALL_TO_ALL: return chakra::ALL_TO_ALL;
    case proto::BROADCAST: return chakra::BROADCAST;
    default: return chakra::ALL_REDUCE;  // validate_schedule admits only known kinds
  }
}

// Integers as ASTRA-sim's examples write them: int32 when the value fits.
void add_integer(ChakraAttributes* attrs, std::string_view name, std::uint64_t value) {
  if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
    add_int32_attribute(attrs, name, static_cast<std::int32_t>(value));
  } else {
    add_uint64_attribute(attrs, name, value);
  }
}

std::uint64_t micros_of(std::int64_t ns) { return ns <= 0 ? 0 : static_cast<std::uint64_t>((ns + 500) / 1000); }

chakra::Node node_of(const proto::Schedule& schedule, OpView op, std::uint32_t rank) {
  const auto index = op.index();
  chakra::Node node;
  node.set_id(index);
  auto* attrs = node.mutable_attr();
  add_bool_attribute(attrs, names::kIsCpuOp, false);
  const bool fixed = op.duration_source() == proto::DURATION_FIXED;
  switch (op.code()) {
    case proto::OP_COMPUTE: {
      const auto& c = compute_of(schedule, op);
      node.set_type(chakra::COMP_NODE);
      node.set_name(fmt::format("compute_{}", index));
      node.set_duration_micros(micros_of(fixed ? op.fixed_duration_ns() : c.estimated_duration_ns()));
      add_uint64_attribute(attrs, names::kNumOps, static_cast<std::uint64_t>(std::llround(std::max(0.0, c.flops()))));
      add_uint64_attribute(attrs, names::kTensorSize, c.memory_traffic_bytes());
      add_bytes_attribute(attrs, names::kCompute, to_binary(c));
      break;
    }
    case proto::OP_SEND:
      node.set_type(chakra::COMM_SEND_NODE);
      node.set_name(fmt::format("send_{}", index));
      add_integer(attrs, names::kCommSrc, rank);
      add_integer(attrs, names::kCommDst, op.peer());
      add_int64_attribute(attrs, names::kCommSize, static_cast<std::int64_t>(op.size_bytes()));
      add_integer(attrs, names::kCommTag, op.tag());
      break;
    case proto::OP_RECV:
      node.set_type(chakra::COMM_RECV_NODE);
      node.set_name(fmt::format("recv_{}", index));
      add_integer(attrs, names::kCommSrc, op.peer());
      add_integer(attrs, names::kCommDst, rank);
      add_int64_attribute(attrs, names::kCommSize, static_cast<std::int64_t>(op.size_bytes()));
      add_integer(attrs, names::kCommTag, op.tag());
      break;
    case proto::OP_COLLECTIVE:
      node.set_type(chakra::COMM_COLL_NODE);
      node.set_name(fmt::format("collective_{}", index));
      add_int64_attribute(attrs, names::kCommType, comm_type(op.collective_kind()));
      add_int64_attribute(attrs, names::kCommSize, static_cast<std::int64_t>(op.size_bytes()));
      add_string_attribute(attrs, names::kPgName, std::to_string(static_cast<std::uint64_t>(op.group()) + 1));
      if (op.algorithm() != proto::ALGORITHM_AUTO) add_integer(attrs, names::kAlgorithm, static_cast<std::uint64_t>(op.algorithm()));
      break;
    case proto::OP_ALLOCATE:
    case proto::OP_FREE: {
      node.set_type(chakra::METADATA_NODE);
      node.set_name(fmt::format("memory_{}", index));
      proto::MemoryOp memory;  // the attribute keeps version 4's message
      memory.set_allocate(op.allocate());
      memory.set_size_bytes(op.size_bytes());
      memory.set_tag(op.memory_tag());
      add_bytes_attribute(attrs, names::kMemory, to_binary(memory));
      break;
    }
    default: break;  // validate_schedule admits none
  }
  add_integer(attrs, names::kStream, op.stream());
  if (fixed) add_int64_attribute(attrs, names::kFixedDurationNs, op.fixed_duration_ns());
  for (auto d : op.deps()) node.add_data_deps(d);
  return node;
}

}  // namespace

ChakraTrace export_chakra(const proto::Schedule& schedule) {
  validate_schedule(schedule);
  ChakraTrace trace;
  chakra::GlobalMetadata metadata;
  metadata.set_version(std::string(kChakraVersion));
  auto* meta = metadata.mutable_attr();
  add_string_list_attribute(meta, names::kStreamNames, {schedule.stream_names().begin(), schedule.stream_names().end()});
  add_string_attribute(meta, names::kScenario, schedule.scenario());
  add_string_attribute(meta, names::kStrategy, schedule.strategy());
  if (schedule.has_header()) add_bytes_attribute(meta, names::kHeader, to_binary(schedule.header()));
  if (schedule.has_summary()) add_bytes_attribute(meta, names::kSummary, to_binary(schedule.summary()));
  std::vector<std::string> group_names;
  for (const auto& g : schedule.groups()) {
    group_names.push_back(g.name());
    trace.comm_groups[static_cast<std::uint64_t>(g.id()) + 1] = {g.ranks().begin(), g.ranks().end()};
  }
  add_string_list_attribute(meta, names::kGroupNames, group_names);
  if (schedule.placement_size() > 0) {
    std::vector<std::uint64_t> placement;
    for (const auto& p : schedule.placement()) {
      placement.push_back(p.node());
      placement.push_back(p.local_gpu());
    }
    add_uint64_list_attribute(meta, names::kPlacement, placement);
  }
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    ChakraRankTrace rank;
    rank.metadata = metadata;
    std::vector<std::optional<std::uint32_t>> last_on_stream(static_cast<std::size_t>(schedule.stream_names_size()));
    for (const OpView op : ops_of(schedule, r)) {
      chakra::Node node = node_of(schedule, op, r);
      auto& previous = last_on_stream[op.stream()];
      const auto deps = op.deps();
      if (previous && std::find(deps.begin(), deps.end(), *previous) == deps.end()) node.add_ctrl_deps(*previous);
      previous = op.index();
      rank.nodes.push_back(std::move(node));
    }
    trace.ranks.push_back(std::move(rank));
  }
  return trace;
}

void write_chakra_trace(const ChakraTrace& trace, const std::filesystem::path& prefix) {
  // Every file is written under a temporary name first and renamed into place
  // only once all are written: a failure (a full disk) or a signal leaves no
  // part of an export, and the temporaries of this run are removed.
  const std::string suffix = fmt::format(".partial-{}", ::getpid());
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> staged;  // temporary, final
  const auto stage = [&](std::filesystem::path final_path, std::string_view bytes) {
    std::filesystem::path temporary = final_path;
    temporary += suffix;
    staged.emplace_back(temporary, std::move(final_path));
    write_file_atomically(temporary, bytes);
  };
  try {
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      throw_if_interrupted();
      stage(chakra_rank_path(prefix, static_cast<std::uint32_t>(r)), serialize_chakra_stream(trace.ranks[r]));
    }
    stage(chakra_comm_groups_path(prefix), format_chakra_comm_groups(trace.comm_groups));
    for (const auto& [temporary, final_path] : staged) std::filesystem::rename(temporary, final_path);
  } catch (...) {
    std::error_code ignored;
    for (const auto& [temporary, final_path] : staged) std::filesystem::remove(temporary, ignored);
    throw;
  }
}

}  // namespace eppsim
