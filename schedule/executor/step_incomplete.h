#pragma once
// A step that did not complete keeps the trace of what finished: its
// Trace.incomplete says when it stopped, why, and which ops were unfinished.
// Two causes: a simulated fault (sim/engine/fault_plan.h) stops or stalls it,
// and the run ends as a what-if; or SIGINT/SIGTERM interrupts the engine
// (base/interrupt.h), which throws StepInterrupted carrying the partial
// trace, and the command line writes it beside the output directory, which
// keeps its previous complete outputs.
#include <exception>
#include <memory>
#include <string>

#include "base/interrupt.h"
#include "schedule/executor/executor_core.h"
#include "proto/trace.pb.h"

namespace eppsim {

// Marks `trace` incomplete: stopped at `stopped_s` for `reason`, with the core's
// count of ops done and its unfinished ops.
void mark_incomplete(proto::Trace& trace, double stopped_s, const std::string& reason, const ExecutorCore& core);

class StepInterrupted : public Interrupted {
 public:
  // `hold` keeps main()'s interrupt deadline (base/interrupt.h) waiting until
  // the last copy of this exception is gone: the partial trace gets written.
  StepInterrupted(int signal, proto::Trace partial, std::shared_ptr<const InterruptDeadlineHold> hold);
  // The ops that finished; partial_trace().incomplete() says the rest.
  const proto::Trace& partial_trace() const { return partial_; }

 private:
  proto::Trace partial_;
  std::shared_ptr<const InterruptDeadlineHold> hold_;
};

// Rethrows `error`; an Interrupted becomes a StepInterrupted carrying
// core.trace(engine) of what finished by now, marked incomplete.
[[noreturn]] void rethrow_keeping_partial_trace(std::exception_ptr error, const ExecutorCore& core,
                                                const std::string& engine);

}  // namespace eppsim
