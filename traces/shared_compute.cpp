#include "traces/shared_compute.h"

#include <utility>

#include "traces/proto_io.h"

namespace eppsim {

std::uint32_t SharedComputes::index_of(proto::Schedule& schedule, proto::ComputeOp work) {
  const auto next = static_cast<std::uint32_t>(schedule.shared_computes_size());
  const auto [it, inserted] = index_.try_emplace(to_binary(work), next);  // deterministic bytes
  if (inserted) *schedule.add_shared_computes() = std::move(work);
  return it->second;
}

std::size_t inline_shared_computes(proto::Schedule& schedule) {
  std::size_t changed = 0;
  bool out_of_range = false;
  for (auto& program : *schedule.mutable_programs()) {
    for (auto& op : *program.mutable_ops()) {
      if (op.kind_case() != proto::Op::kSharedCompute) continue;
      const auto index = static_cast<int>(op.shared_compute());
      if (index >= schedule.shared_computes_size()) {
        out_of_range = true;  // left for validate_schedule to name
        continue;
      }
      *op.mutable_compute() = schedule.shared_computes(index);
      ++changed;
    }
  }
  if (!out_of_range) schedule.clear_shared_computes();
  return changed;
}

}  // namespace eppsim
