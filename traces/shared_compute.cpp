#include "traces/shared_compute.h"

#include <utility>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace eppsim {

std::uint32_t SharedComputes::index_of(proto::Schedule& schedule, proto::ComputeOp work) {
  key_.clear();
  {
    // Deterministic, so that equal works give equal bytes.
    google::protobuf::io::StringOutputStream stream(&key_);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    work.SerializeToCodedStream(&coded);
  }
  const auto next = static_cast<std::uint32_t>(schedule.shared_computes_size());
  const auto [it, inserted] = index_.try_emplace(key_, next);
  if (inserted) *schedule.add_shared_computes() = std::move(work);
  return it->second;
}

std::size_t inline_shared_computes(proto::Schedule& schedule) {
  std::size_t changed = 0;
  for (auto& program : *schedule.mutable_programs()) {
    for (auto& op : *program.mutable_ops()) {
      if (op.kind_case() != proto::Op::kSharedCompute) continue;
      const auto index = static_cast<int>(op.shared_compute());
      if (index >= schedule.shared_computes_size()) continue;  // validate_schedule names it
      *op.mutable_compute() = schedule.shared_computes(index);
      ++changed;
    }
  }
  bool every_op_inline = true;
  for (const auto& program : schedule.programs())
    for (const auto& op : program.ops()) every_op_inline = every_op_inline && op.kind_case() != proto::Op::kSharedCompute;
  if (every_op_inline) schedule.clear_shared_computes();
  return changed;
}

}  // namespace eppsim
