#include "schedule/executor/simulated_ns.h"

#include <fmt/format.h>

#include "base/errors.h"

namespace eppsim {

void throw_unrepresentable_time(const std::string& what, double seconds) {
  throw InputError(fmt::format("{}: simulated time {} s cannot be represented (it must lie in 0 to {} s, the bound "
                               "of base/input_limits.h): an input's duration, size or rate is out of proportion",
                               what, seconds, limits::kMaxSimulatedSeconds));
}

}  // namespace eppsim
