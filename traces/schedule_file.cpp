#include "traces/schedule_file.h"

#include <fmt/format.h>

#include "models/errors.h"
#include "traces/compute_segments.h"
#include "traces/executor/schedule_validation.h"
#include "traces/program_ops.h"
#include "traces/proto_io.h"

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
