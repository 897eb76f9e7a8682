#include "runtime/comm_plan.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/units.h"
#include "schedule/op_cost.h"
#include "schedule/op_names.h"
#include "schedule/shared_compute.h"

namespace eppsim::runtime {

std::uint64_t comm_elements(std::uint64_t bytes) { return (bytes + kCommElementBytes - 1) / kCommElementBytes; }

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

std::string_view phase_name(proto::Phase phase) {
  switch (phase) {
    case proto::FORWARD: return "forward";
    case proto::BACKWARD: return "backward";
    case proto::RECOMPUTE: return "recompute";
    case proto::OPTIMIZER: return "optimizer";
    default: return "unspecified";
  }
}

}  // namespace

CommShape comm_shape(OpView op, const std::vector<std::uint32_t>& group_sizes) {
  CommShape s;
  switch (op.code()) {
    case proto::OP_SEND:
      s.kind = CommKind::SendRecv;
      s.sends = true;
      s.peer = op.peer();
      s.tag = op.tag();
      s.count = s.send_elements = comm_elements(op.size_bytes());
      return s;
    case proto::OP_RECV:
      s.kind = CommKind::SendRecv;
      s.peer = op.peer();
      s.tag = op.tag();
      s.count = s.recv_elements = comm_elements(op.size_bytes());
      return s;
    case proto::OP_COLLECTIVE: break;
    default: throw std::invalid_argument("comm_shape: not a SEND, RECV or COLLECTIVE op");
  }
  s.group = op.group();
  if (s.group >= group_sizes.size()) throw std::invalid_argument(fmt::format("comm_shape: unknown group {}", s.group));
  s.group_size = std::max<std::uint32_t>(group_sizes[s.group], 1);
  const std::uint64_t n = s.group_size;
  const std::uint64_t elements = comm_elements(op.size_bytes());
  if (op.collective_kind() == proto::COLLECTIVE_KIND_UNSPECIFIED) {
    throw std::invalid_argument("comm_shape: collective kind not set");
  }
  s.kind = to_model(op.collective_kind());
  switch (s.kind) {
    case CommKind::AllReduce:
    case CommKind::Broadcast: s.count = s.send_elements = s.recv_elements = elements; break;
    case CommKind::AllGather:
      s.count = s.send_elements = elements;
      s.recv_elements = n * elements;
      break;
    case CommKind::ReduceScatter:
      s.count = s.recv_elements = ceil_div(elements, n);
      s.send_elements = n * s.count;
      break;
    case CommKind::AllToAll:
      s.count = ceil_div(elements, n);
      s.send_elements = s.recv_elements = n * s.count;
      break;
    case CommKind::SendRecv: throw std::invalid_argument("comm_shape: a collective cannot be a send-recv");
  }
  return s;
}

std::vector<std::uint32_t> group_sizes(const proto::Schedule& schedule) {
  std::vector<std::uint32_t> sizes;
  sizes.reserve(static_cast<std::size_t>(schedule.groups_size()));
  for (const auto& g : schedule.groups()) sizes.push_back(static_cast<std::uint32_t>(g.ranks_size()));
  return sizes;
}

std::vector<std::uint32_t> groups_of_rank(const proto::Schedule& schedule, std::uint32_t rank) {
  std::vector<std::uint32_t> groups;
  for (const auto& g : schedule.groups()) {
    if (std::find(g.ranks().begin(), g.ranks().end(), rank) != g.ranks().end()) groups.push_back(g.id());
  }
  return groups;
}

std::uint32_t position_in_group(const proto::Group& group, std::uint32_t rank) {
  const auto it = std::find(group.ranks().begin(), group.ranks().end(), rank);
  if (it == group.ranks().end()) {
    throw std::invalid_argument(fmt::format("rank {} is not a member of group {}", rank, group.id()));
  }
  return static_cast<std::uint32_t>(it - group.ranks().begin());
}

std::uint32_t max_tag(const proto::Schedule& schedule) {
  std::uint32_t tag = 0;
  for (const auto& program : schedule.programs()) {
    for (const OpView op : ops_of(program)) {
      if (op.is_send() || op.is_recv()) tag = std::max(tag, op.tag());
    }
  }
  return tag;
}

std::string describe_op(const proto::Schedule& schedule, OpRef ref) {
  const OpView op = ops_of(schedule, ref.rank)[ref.op];
  const std::string at = fmt::format("rank {} op {}", ref.rank, ref.op);
  switch (op.code()) {
    case proto::OP_SEND:
      return fmt::format("{} (SEND of {} to rank {}, tag {})", at, format_bytes(Bytes(op.size_bytes())), op.peer(),
                         op.tag());
    case proto::OP_RECV:
      return fmt::format("{} (RECV of {} from rank {}, tag {})", at, format_bytes(Bytes(op.size_bytes())), op.peer(),
                         op.tag());
    case proto::OP_COLLECTIVE: {
      const auto& members = schedule.groups(static_cast<int>(op.group())).ranks();
      return fmt::format("{} ({} of {} on group {} [{}])", at, collective_kind_name(op.collective_kind()),
                         format_bytes(Bytes(op.size_bytes())), op.group(), fmt::join(members, ", "));
    }
    case proto::OP_COMPUTE: {
      const auto& c = compute_of(schedule, op);
      return fmt::format("{} (COMPUTE {}, stage {} chunk {})", at, phase_name(c.phase()), c.stage(), c.chunk());
    }
    case proto::OP_ALLOCATE:
    case proto::OP_FREE: return fmt::format("{} (MEMORY)", at);
    default: return at;
  }
}

}  // namespace eppsim::runtime
