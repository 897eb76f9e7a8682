#pragma once
// The structure every executor relies on, checked once before a Schedule runs.
// A violation throws InputError naming the rank, the op and the rule:
//   "schedule: rank 3 op 17: depends on op 20, which is not earlier".
//
// Rules (schedule.proto):
//   - header.schema_version is at most kScheduleSchemaVersion (0: legacy, no header);
//   - one program per rank, one placement per rank (or none);
//   - group ids equal their index; members are ranks in range, each listed once;
//   - an op's stream is in the stream table, its deps are earlier ops of its rank;
//   - duration_source is known; DURATION_FIXED needs fixed_duration_ns >= 0, and
//     DURATION_FROM_WORK leaves fixed_duration_ns at 0; a MEMORY op takes no time;
//   - SEND/RECV peers are ranks; a COLLECTIVE has a kind and a group its rank
//     belongs to;
//   - enum fields hold known values (a binary or text schedule can carry any
//     number); size_bytes and compute.layer_count are within the bounds of
//     base/input_limits.h;
//   - a COMPUTE op's splits have a kind and name groups its rank belongs to, and
//     when there are splits `shards` is the product of their group sizes; its
//     segment_tokens and segment_context_tokens have one entry per segment
//     each, and it carries none of version 2's Segment messages (readers of
//     files convert them first: schedule/compute_segments.h).
// Matching (sizes, tags, kinds of collectives) depends on the order ops are
// issued in: the executor core checks it (executor_core.h).
#include <cstdint>
#include <memory>

#include "proto/schedule.pb.h"

namespace eppsim {

void validate_schedule(const proto::Schedule& schedule);

// validate_schedule a program at a time, for a reader that walks the programs
// itself (the executor core builds a rank's tables right after checking its
// program, while its columns are in cache). The constructor checks what is
// not a program's (header, groups, shared computes).
class ScheduleValidator {
 public:
  explicit ScheduleValidator(const proto::Schedule& schedule);
  ~ScheduleValidator();
  void validate_program(std::uint32_t rank);
  // The same rules, op by op in program order: slower, and it names the first
  // violation. validate_program runs it only on a program that fails its
  // column checks (tests compare the two).
  void validate_program_op_by_op(std::uint32_t rank);

 private:
  bool passes_column_checks(std::uint32_t rank);
  struct Checked;
  const proto::Schedule& schedule_;
  std::unique_ptr<Checked> checked_;
};

}  // namespace eppsim
