#pragma once
// An engine stopped by SIGINT or SIGTERM mid-step (models/interrupt.h) keeps
// the trace of what finished so far: the command line writes it beside the
// output directory, which itself keeps its previous complete outputs.
#include <exception>
#include <string>

#include "models/interrupt.h"
#include "traces/executor/executor_core.h"
#include "traces/trace.pb.h"

namespace eppsim {

class StepInterrupted : public Interrupted {
 public:
  StepInterrupted(int signal, proto::Trace partial);
  // The ops that finished, with trace.ops_unfinished > 0.
  const proto::Trace& partial_trace() const { return partial_; }

 private:
  proto::Trace partial_;
};

// Rethrows `error`; an Interrupted becomes a StepInterrupted carrying
// core.trace(engine) of what finished by now.
[[noreturn]] void rethrow_keeping_partial_trace(std::exception_ptr error, const ExecutorCore& core,
                                                const std::string& engine);

}  // namespace eppsim
