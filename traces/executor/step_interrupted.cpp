#include "traces/executor/step_interrupted.h"

#include <utility>

namespace eppsim {

StepInterrupted::StepInterrupted(int signal, proto::Trace partial) : Interrupted(signal), partial_(std::move(partial)) {}

void rethrow_keeping_partial_trace(std::exception_ptr error, const ExecutorCore& core, const std::string& engine) {
  try {
    std::rethrow_exception(error);
  } catch (const StepInterrupted&) {
    throw;
  } catch (const Interrupted& e) {
    proto::Trace partial = core.trace(engine);
    partial.set_ops_unfinished(core.ops_total() - core.ops_done());
    throw StepInterrupted(e.signal(), std::move(partial));
  }
}

}  // namespace eppsim
