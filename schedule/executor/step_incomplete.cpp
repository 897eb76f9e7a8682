#include "schedule/executor/step_incomplete.h"

#include <cmath>
#include <utility>

namespace eppsim {

void mark_incomplete(proto::Trace& trace, double stopped_s, const std::string& reason, const ExecutorCore& core) {
  auto* incomplete = trace.mutable_incomplete();
  incomplete->set_stopped_ns(std::llround(stopped_s * 1e9));
  incomplete->set_reason(reason);
  incomplete->set_ops_done(core.ops_done());
  incomplete->set_ops_total(core.ops_total());
  for (const std::string& line : core.unfinished_ops()) incomplete->add_unfinished(line);
}

StepInterrupted::StepInterrupted(int signal, proto::Trace partial, std::shared_ptr<const InterruptDeadlineHold> hold)
    : Interrupted(signal), partial_(std::move(partial)), hold_(std::move(hold)) {}

void rethrow_keeping_partial_trace(std::exception_ptr error, const ExecutorCore& core, const std::string& engine) {
  try {
    std::rethrow_exception(error);
  } catch (const StepInterrupted&) {
    throw;
  } catch (const Interrupted& e) {
    auto hold = std::make_shared<const InterruptDeadlineHold>();
    proto::Trace partial = core.trace(engine);
    mark_incomplete(partial, static_cast<double>(partial.step_time_ns()) * 1e-9, e.what(), core);
    throw StepInterrupted(e.signal(), std::move(partial), std::move(hold));
  }
}

}  // namespace eppsim
