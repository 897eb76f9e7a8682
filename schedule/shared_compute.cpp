#include "schedule/shared_compute.h"

#include <utility>

#include "base/proto_io.h"

namespace eppsim {

SharedComputes::SharedComputes(const proto::Schedule& schedule) {
  for (int i = 0; i < schedule.shared_computes_size(); ++i) {
    index_.try_emplace(to_binary(schedule.shared_computes(i)), static_cast<std::uint32_t>(i));
  }
}

std::uint32_t SharedComputes::index_of(proto::Schedule& schedule, proto::ComputeOp work) {
  const auto next = static_cast<std::uint32_t>(schedule.shared_computes_size());
  const auto [it, inserted] = index_.try_emplace(to_binary(work), next);  // deterministic bytes
  if (inserted) *schedule.add_shared_computes() = std::move(work);
  return it->second;
}

}  // namespace eppsim
