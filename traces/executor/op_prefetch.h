#pragma once
// Reading a Schedule op by op in program order: every Op and the message of
// its kind are separate heap allocations, so each op read costs a cache miss
// or two that the hardware prefetcher cannot foresee. prefetch_ops asks for
// the Op `kOpDistance` ops ahead and its kind's message `kKindDistance` ahead
// (by then the Op is in cache), so that the passes over a large Schedule
// (validation, the executor core's build, pricing, the trace) find them there.
#include <cstddef>

#include "traces/schedule.pb.h"

namespace eppsim {

namespace op_prefetch_detail {
constexpr std::size_t kOpDistance = 16, kKindDistance = 8;

inline void prefetch_kind(const proto::Op& o) {
  switch (o.kind_case()) {
    case proto::Op::kCompute: __builtin_prefetch(&o.compute()); break;
    case proto::Op::kSend: __builtin_prefetch(&o.send()); break;
    case proto::Op::kRecv: __builtin_prefetch(&o.recv()); break;
    case proto::Op::kCollective: __builtin_prefetch(&o.collective()); break;
    case proto::Op::kMemory: __builtin_prefetch(&o.memory()); break;
    default: break;
  }
}
}  // namespace op_prefetch_detail

// Before reading op i of a rank's program.
inline void prefetch_ops(const google::protobuf::RepeatedPtrField<proto::Op>& program, int i) {
  using namespace op_prefetch_detail;
  const auto n = static_cast<std::size_t>(program.size()), at = static_cast<std::size_t>(i);
  if (at + kOpDistance < n) __builtin_prefetch(&program[static_cast<int>(at + kOpDistance)]);
  if (at + kKindDistance < n) prefetch_kind(program[static_cast<int>(at + kKindDistance)]);
}

}  // namespace eppsim
