#pragma once
// Compute ops listed once and run by several ops (schema version 4): an op
// whose kind is `shared_compute` runs Schedule.shared_computes[shared_compute].
// The members of a sequence- or tensor-parallel group run the same piece of a
// chunk, so planners list each piece once instead of once per member (README
// "Speed" for what it saves).
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "traces/schedule.pb.h"

namespace eppsim {

// Whether the op is a COMPUTE op, with its work inline or shared.
inline bool is_compute(const proto::Op& op) {
  return op.kind_case() == proto::Op::kCompute || op.kind_case() == proto::Op::kSharedCompute;
}

// The compute op's work: its own, or the shared one it names. The op must be a
// compute op whose index is in range (validate_schedule checks both).
inline const proto::ComputeOp& compute_of(const proto::Schedule& schedule, const proto::Op& op) {
  return op.kind_case() == proto::Op::kSharedCompute ? schedule.shared_computes(static_cast<int>(op.shared_compute()))
                                                      : op.compute();
}

// Lists a Schedule's compute ops once each: the same work, byte for byte,
// gets the same index into Schedule.shared_computes, in first-use order.
class SharedComputes {
 public:
  // The index of `work` in schedule.shared_computes, appending it when new.
  std::uint32_t index_of(proto::Schedule& schedule, proto::ComputeOp work);
  std::size_t size() const { return index_.size(); }

 private:
  std::unordered_map<std::string, std::uint32_t> index_;
};

// Gives every shared compute op a copy of its work and empties the table.
// Returns how many ops it changed.
std::size_t inline_shared_computes(proto::Schedule& schedule);

}  // namespace eppsim
