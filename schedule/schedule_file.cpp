#include "schedule/schedule_file.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "base/message_stream.h"
#include "schedule/compute_segments.h"
#include "schedule/identical_replicas.h"
#include "schedule/schedule_validation.h"
#include "schedule/program_ops.h"
#include "base/proto_io.h"

namespace eppsim {

proto::Schedule read_schedule_file(const std::filesystem::path& path) {
  proto::Schedule schedule;
  if (is_message_stream(path)) {
    read_message_stream(path, &schedule);
  } else {
    read_message(path, &schedule);
  }
  check_num_ranks(schedule, schedule.num_ranks(), path);
  convert_segment_messages(schedule);
  try {
    convert_op_messages(schedule, "schedule");
    validate_schedule(schedule);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path.string(), e.what()));
  }
  check_identical_replicas(schedule, path.string());
  return schedule;
}

void write_schedule_file(const proto::Schedule& schedule, const std::filesystem::path& path) {
  if (proto_format_for(path) != ProtoFormat::Binary) return write_message(schedule, path);
  using S = proto::Schedule;
  MessageStreamWriter stream(path, schedule.GetDescriptor()->full_name());
  stream.write_part(*message_without_fields(schedule, {S::kPlacementFieldNumber, S::kGroupsFieldNumber,
                                                       S::kProgramsFieldNumber, S::kSharedComputesFieldNumber}));
  write_slices<S>(stream, schedule.placement(), [](S& part) { return part.add_placement(); });
  write_slices<S>(stream, schedule.groups(), [](S& part) { return part.add_groups(); });
  write_slices<S>(stream, schedule.programs(), [](S& part) { return part.add_programs(); });
  write_slices<S>(stream, schedule.shared_computes(), [](S& part) { return part.add_shared_computes(); });
  stream.commit();
}

}  // namespace eppsim
