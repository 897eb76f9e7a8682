#pragma once
// Compute work listed once and run by several ops (schema version 4; version 5
// lists every compute op's work so): a COMPUTE op runs
// Schedule.shared_computes[op.shared_compute()].
// The members of a sequence- or tensor-parallel group run the same piece of a
// chunk, so planners list each piece once instead of once per member
// (docs/dev/speed-history.md, "Before 10612c2", for what it saves).
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "schedule/program_ops.h"
#include "proto/schedule.pb.h"

namespace eppsim {

// The compute op's work. The op must be a compute op whose index is in range
// (validate_schedule checks both).
inline const proto::ComputeOp& compute_of(const proto::Schedule& schedule, OpView op) {
  return schedule.shared_computes(static_cast<int>(op.shared_compute()));
}

// Lists a Schedule's compute ops once each: the same work, byte for byte,
// gets the same index into Schedule.shared_computes, in first-use order.
class SharedComputes {
 public:
  SharedComputes() = default;
  // Knows the works `schedule` lists already (the first of equal ones).
  explicit SharedComputes(const proto::Schedule& schedule);

  // The index of `work` in schedule.shared_computes, appending it when new.
  std::uint32_t index_of(proto::Schedule& schedule, proto::ComputeOp work);
  std::size_t size() const { return index_.size(); }

 private:
  std::unordered_map<std::string, std::uint32_t> index_;
};

}  // namespace eppsim
