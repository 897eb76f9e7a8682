#include "runtime/comm_bench_data.h"

#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/units.h"

namespace eppsim::runtime {
namespace {

float value(std::uint32_t rank, std::uint64_t i) { return static_cast<float>(rank + 1 + i % 7); }

}  // namespace

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

}  // namespace

void check_bench_backend(std::string_view command, const std::string& backend, bool cuda_built) {
  if (backend != "cpu" && backend != "cuda") {
    throw InputError(fmt::format("{}: --backend: must be cpu or cuda, got '{}'", command, backend));
  }
  if (backend == "cuda" && !cuda_built) throw InputError(fmt::format("{}: --backend cuda: this build has no CUDA/NCCL", command));
}

std::vector<CommKind> parse_bench_ops(std::string_view command, const std::string& list) {
  std::vector<CommKind> ops;
  for (const auto& name : split_list(list)) {
    const auto op = parse_comm_kind(name);
    if (!op) throw InputError(fmt::format("{}: --ops: unknown op '{}' (known: {})", command, name, comm_kind_names()));
    ops.push_back(*op);
  }
  return ops;
}

std::vector<std::uint64_t> parse_bench_sizes(const std::string& list) {
  std::vector<std::uint64_t> sizes;
  for (const auto& item : split_list(list)) sizes.push_back(parse_bytes(item).count);
  return sizes;
}

CommShape bench_shape(CommKind op, std::uint64_t bytes, std::uint32_t group_size) {
  proto::RankProgram program;  // the one op whose shape it is
  const auto collective = [&](proto::CollectiveKind kind) {
    add_op(program, OpFields::collective(0, kind, 0, bytes));
    return comm_shape(ops_of(program)[0], {group_size});
  };
  switch (op) {
    case CommKind::SendRecv: {
      add_op(program, OpFields::send(0, 0, bytes, 0));
      CommShape s = comm_shape(ops_of(program)[0], {});
      s.recv_elements = s.count;  // the receiver's side
      s.group_size = 2;
      return s;
    }
    case CommKind::AllReduce: return collective(proto::ALL_REDUCE);
    case CommKind::AllGather: return collective(proto::ALL_GATHER);
    case CommKind::ReduceScatter: return collective(proto::REDUCE_SCATTER);
    case CommKind::AllToAll: return collective(proto::ALL_TO_ALL);
    case CommKind::Broadcast: return collective(proto::BROADCAST);
  }
  throw std::invalid_argument("bench_shape: unknown CommKind");
}

std::vector<float> bench_send_buffer(const CommShape& shape, std::uint32_t position) {
  std::vector<float> send(shape.send_elements);
  for (std::uint64_t i = 0; i < send.size(); ++i) send[i] = value(position, i);
  return send;
}

bool bench_received_correctly(CommKind op, const CommShape& shape, std::uint32_t position, std::uint32_t group_size,
                              const std::vector<float>& received) {
  // Only position 1 receives a send-recv; a broadcast's root (position 0) only sends.
  if ((op == CommKind::SendRecv && position != 1) || (op == CommKind::Broadcast && position == 0)) return true;
  if (received.size() != shape.recv_elements) return false;
  const std::uint64_t c = shape.count;
  for (std::uint64_t i = 0; i < received.size(); ++i) {
    float expected = 0.0f;
    switch (op) {
      case CommKind::SendRecv:
      case CommKind::Broadcast: expected = value(0, i); break;
      case CommKind::AllReduce:
        for (std::uint32_t r = 0; r < group_size; ++r) expected += value(r, i);
        break;
      case CommKind::AllGather: expected = value(static_cast<std::uint32_t>(i / c), i % c); break;
      case CommKind::ReduceScatter:
        for (std::uint32_t r = 0; r < group_size; ++r) expected += value(r, position * c + i);
        break;
      case CommKind::AllToAll: expected = value(static_cast<std::uint32_t>(i / c), position * c + i % c); break;
    }
    if (received[i] != expected) return false;
  }
  return true;
}

}  // namespace eppsim::runtime
