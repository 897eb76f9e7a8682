#include "traces/op_event_names.h"

#include <iterator>

#include <fmt/compile.h>

#include "schedule/op_names.h"

namespace eppsim {
namespace {

proto::Phase phase_of(const OpEventNameKey& key) { return static_cast<proto::Phase>(key.variant); }

std::string_view phase_letter(proto::Phase phase) {
  switch (phase) {
    case proto::FORWARD: return "F";
    case proto::BACKWARD: return "B";
    case proto::RECOMPUTE: return "R";
    case proto::OPTIMIZER: return "optimizer";
    default: return "compute";
  }
}

std::string_view phase_category(proto::Phase phase) {
  switch (phase) {
    case proto::FORWARD: return "forward";
    case proto::BACKWARD: return "backward";
    case proto::RECOMPUTE: return "recompute";
    case proto::OPTIMIZER: return "optimizer";
    default: return "compute";
  }
}

}  // namespace

OpEventNameKey op_event_name_key(OpEventRef event) {
  switch (event.kind()) {
    case proto::COMPUTE: return {event.kind(), event.phase(), event.chunk(), event.stage()};
    case proto::SEND:
    case proto::RECV: return {event.kind(), 0, event.peer(), 0};
    case proto::COLLECTIVE: return {event.kind(), event.collective(), event.group(), 0};
    case proto::MEMORY: return {event.kind(), 0, 0, 0};
    default: return {proto::OP_KIND_UNSPECIFIED, 0, 0, 0};
  }
}

void append_op_event_name(fmt::memory_buffer& out, const OpEventNameKey& key) {
  auto it = std::back_inserter(out);
  switch (key.kind) {
    case proto::COMPUTE: fmt::format_to(it, FMT_COMPILE("{} c{} s{}"), phase_letter(phase_of(key)), key.first, key.second); break;
    case proto::SEND: fmt::format_to(it, FMT_COMPILE("send->{}"), key.first); break;
    case proto::RECV: fmt::format_to(it, FMT_COMPILE("recv<-{}"), key.first); break;
    case proto::COLLECTIVE:
      fmt::format_to(it, FMT_COMPILE("{} g{}"), collective_kind_name(static_cast<proto::CollectiveKind>(key.variant)),
                     key.first);
      break;
    case proto::MEMORY: out.append(std::string_view("memory")); break;
    default: out.append(std::string_view("op")); break;
  }
}

std::string op_event_name(const OpEventNameKey& key) {
  fmt::memory_buffer out;
  append_op_event_name(out, key);
  return fmt::to_string(out);
}

std::string_view op_event_category(const OpEventNameKey& key) {
  switch (key.kind) {
    case proto::COMPUTE: return phase_category(phase_of(key));
    case proto::SEND: return "send";
    case proto::RECV: return "recv";
    case proto::COLLECTIVE: return "collective";
    case proto::MEMORY: return "memory";
    default: return "op";
  }
}

}  // namespace eppsim
