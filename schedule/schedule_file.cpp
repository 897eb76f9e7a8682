#include "schedule/schedule_file.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "schedule/compute_segments.h"
#include "schedule/schedule_validation.h"
#include "schedule/program_ops.h"
#include "base/proto_io.h"

namespace eppsim {

proto::Schedule read_schedule_file(const std::filesystem::path& path) {
  proto::Schedule schedule;
  read_message(path, &schedule);
  check_num_ranks(schedule, schedule.num_ranks(), path);
  convert_segment_messages(schedule);
  try {
    convert_op_messages(schedule, "schedule");
    validate_schedule(schedule);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path.string(), e.what()));
  }
  return schedule;
}

}  // namespace eppsim
