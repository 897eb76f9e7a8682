#pragma once
// A Trace as parts, for the commands that read traces of any size (export,
// diff, validate, replay): a header (every field but the op events, memory
// samples and busy figures), then parts holding slices of those in the
// trace's order. A trace file is read a part at a time however large it is
// (TraceFile, schedule/trace_file.h); a Trace in memory is one part
// (TraceInMemory). What a command keeps of the parts is its own: the Chrome
// export writes each part as it comes, diff keeps an event's key and times.
#include <cstdint>
#include <functional>
#include <string>

#include "proto/trace.pb.h"

namespace eppsim {

class TraceParts {
 public:
  virtual ~TraceParts() = default;
  // Every field of the trace but op_events, events, memory and busy.
  virtual const proto::Trace& header() const = 0;
  // Calls `visit(part, first_event)` for each part, in order: part.op_events()
  // holds the trace's events from index `first_event` on (a trace of the
  // form before op_events has them converted), part.memory() and
  // part.busy() the next samples and figures. A TraceFile checks each part
  // as it reads it (InputError). A command may visit the parts more than once.
  virtual void for_each_part(const std::function<void(const proto::Trace& part, std::uint64_t first_event)>& visit)
      const = 0;
  // What a command's output and errors about the trace as a whole name: the
  // path as given (a file or a run directory), or "trace". Errors in its
  // fields and parts name the file they are in.
  virtual const std::string& name() const = 0;
};

// A Trace in memory (already checked, or written by eppsim) as one part.
class TraceInMemory final : public TraceParts {
 public:
  // `trace` must outlive this.
  explicit TraceInMemory(const proto::Trace& trace, std::string name = "trace");
  const proto::Trace& header() const override { return header_; }
  void for_each_part(const std::function<void(const proto::Trace& part, std::uint64_t first_event)>& visit)
      const override {
    visit(trace_, 0);
  }
  const std::string& name() const override { return name_; }

 private:
  const proto::Trace& trace_;
  proto::Trace header_;
  std::string name_;
};

// The trace's header: `trace` without op_events, events, memory and busy.
proto::Trace trace_header(const proto::Trace& trace);

// Whether field `number` of Trace is one a part slices (op_events, events,
// memory, busy) rather than one of the header's.
bool is_sliced_trace_field(int number);

}  // namespace eppsim
