#include "schedule/trace_parts.h"

#include <utility>

#include "base/message_stream.h"

namespace eppsim {

bool is_sliced_trace_field(int number) {
  return number == proto::Trace::kOpEventsFieldNumber || number == proto::Trace::kEventsFieldNumber ||
         number == proto::Trace::kMemoryFieldNumber || number == proto::Trace::kBusyFieldNumber;
}

proto::Trace trace_header(const proto::Trace& trace) {
  proto::Trace header;
  header.CopyFrom(*message_without_fields(trace, {proto::Trace::kOpEventsFieldNumber, proto::Trace::kEventsFieldNumber,
                                                  proto::Trace::kMemoryFieldNumber, proto::Trace::kBusyFieldNumber}));
  return header;
}

TraceInMemory::TraceInMemory(const proto::Trace& trace, std::string name)
    : trace_(trace), header_(trace_header(trace)), name_(std::move(name)) {}

}  // namespace eppsim
