#include "models/comm_kind.h"

#include <array>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace eppsim {
namespace {

constexpr std::array<std::pair<CommKind, std::string_view>, 6> kNames = {{
    {CommKind::SendRecv, "send-recv"},
    {CommKind::AllReduce, "all-reduce"},
    {CommKind::AllGather, "all-gather"},
    {CommKind::ReduceScatter, "reduce-scatter"},
    {CommKind::AllToAll, "all-to-all"},
    {CommKind::Broadcast, "broadcast"},
}};

}  // namespace

std::string_view comm_kind_name(CommKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  throw std::invalid_argument(fmt::format("comm_kind_name: unknown kind {}", static_cast<int>(kind)));
}

std::optional<CommKind> parse_comm_kind(std::string_view name) {
  for (const auto& [k, known] : kNames) {
    if (known == name) return k;
  }
  return std::nullopt;
}

std::string_view comm_kind_names() { return "send-recv, all-reduce, all-gather, reduce-scatter, all-to-all, broadcast"; }

double bus_bytes(CommKind kind, std::uint32_t group_size, double size_bytes) {
  const double n = group_size;
  switch (kind) {
    case CommKind::SendRecv:
    case CommKind::Broadcast: return size_bytes;
    case CommKind::AllReduce: return 2.0 * (n - 1.0) / n * size_bytes;
    case CommKind::ReduceScatter:
    case CommKind::AllToAll: return (n - 1.0) / n * size_bytes;
    case CommKind::AllGather: return (n - 1.0) * size_bytes;
  }
  throw std::invalid_argument(fmt::format("bus_bytes: unknown kind {}", static_cast<int>(kind)));
}

double algbw_bytes(CommKind kind, std::uint32_t group_size, double size_bytes) {
  return kind == CommKind::AllGather ? size_bytes * group_size : size_bytes;
}

}  // namespace eppsim
