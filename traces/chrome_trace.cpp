#include "traces/chrome_trace.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "base/atomic_file.h"
#include "schedule/trace_events.h"
#include "schedule/trace_parts.h"
#include "traces/op_event_names.h"

namespace eppsim {
namespace {

using Buffer = fmt::memory_buffer;

// A JSON string literal: quotes, backslashes and control characters escaped;
// other bytes (UTF-8) copied as they are.
void append_json_string(Buffer& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"': out.append(std::string_view("\\\"")); break;
      case '\\': out.append(std::string_view("\\\\")); break;
      case '\n': out.append(std::string_view("\\n")); break;
      case '\r': out.append(std::string_view("\\r")); break;
      case '\t': out.append(std::string_view("\\t")); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), FMT_COMPILE("\\u{:04x}"), static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// Nanoseconds as microseconds, exactly: "1234.567".
void append_microseconds(Buffer& out, std::int64_t ns) {
  const bool negative = ns < 0;
  // Magnitude in unsigned arithmetic so that INT64_MIN does not overflow.
  const std::uint64_t magnitude = negative ? std::uint64_t{0} - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}{}.{:03}"), negative ? "-" : "", magnitude / 1000, magnitude % 1000);
}

std::string_view collective_arg(proto::CollectiveKind kind) {
  switch (kind) {
    case proto::ALL_REDUCE: return "all_reduce";
    case proto::ALL_GATHER: return "all_gather";
    case proto::REDUCE_SCATTER: return "reduce_scatter";
    case proto::ALL_TO_ALL: return "all_to_all";
    case proto::BROADCAST: return "broadcast";
    default: return "unspecified";
  }
}

class StreamNames {
 public:
  explicit StreamNames(const proto::Trace& trace) : trace_(trace) {}
  std::string operator()(std::uint32_t stream) const {
    if (stream < static_cast<std::uint32_t>(trace_.stream_names_size())) return trace_.stream_names(static_cast<int>(stream));
    return fmt::format("stream {}", stream);
  }

 private:
  const proto::Trace& trace_;
};

void append_op_event(Buffer& out, OpEventRef e, const StreamNames& streams) {
  auto it = std::back_inserter(out);
  out.append(std::string_view("{\"name\":\""));
  const OpEventNameKey name = op_event_name_key(e);
  append_op_event_name(out, name);  // digits and fixed words: nothing to escape
  out.push_back('"');
  const std::string_view category = op_event_category(name);
  fmt::format_to(it, FMT_COMPILE(",\"cat\":\"{}\",\"ph\":\"X\",\"ts\":"), category);
  append_microseconds(out, e.start_ns());
  out.append(std::string_view(",\"dur\":"));
  append_microseconds(out, e.end_ns() - e.start_ns());
  fmt::format_to(it, FMT_COMPILE(",\"pid\":{},\"tid\":{},\"args\":{{\"op\":{},\"stream\":"), e.rank(), e.stream(), e.op());
  append_json_string(out, streams(e.stream()));
  fmt::format_to(it, FMT_COMPILE(",\"size_bytes\":{}"), e.size_bytes());
  switch (e.kind()) {
    case proto::COMPUTE: fmt::format_to(it, FMT_COMPILE(",\"chunk\":{},\"stage\":{}"), e.chunk(), e.stage()); break;
    case proto::SEND:
    case proto::RECV: fmt::format_to(it, FMT_COMPILE(",\"peer\":{}"), e.peer()); break;
    case proto::COLLECTIVE:
      fmt::format_to(it, FMT_COMPILE(",\"group\":{},\"collective\":\"{}\""), e.group(), collective_arg(e.collective()));
      break;
    default: break;
  }
  out.append(std::string_view("}}"));
}

// The whole document into `out`; `spill(out)` after each event lets a file
// writer take what has accumulated (write_chrome_trace) or keep it all
// (chrome_trace_json). Two visits of the parts: the ranks and streams to
// name, then the events.
template <class Spill>
void emit_chrome_trace(const TraceParts& parts, Buffer& out, Spill spill) {
  const proto::Trace& trace = parts.header();
  // Ranks and streams to name: the declared ones, and any other an event uses.
  std::set<std::uint32_t> extra_ranks;
  std::set<std::uint32_t> extra_streams;
  const std::uint32_t declared_streams = static_cast<std::uint32_t>(trace.stream_names_size());
  parts.for_each_part([&](const proto::Trace& part, std::uint64_t) {
    for (const OpEventRef e : events_of(part)) {
      if (e.rank() >= trace.num_ranks()) extra_ranks.insert(e.rank());
      if (e.stream() >= declared_streams) extra_streams.insert(e.stream());
    }
    for (const proto::MemorySample& m : part.memory()) {
      if (m.rank() >= trace.num_ranks()) extra_ranks.insert(m.rank());
    }
  });
  std::vector<std::uint32_t> streams(declared_streams);
  for (std::uint32_t i = 0; i < declared_streams; ++i) streams[i] = i;
  streams.insert(streams.end(), extra_streams.begin(), extra_streams.end());
  const StreamNames stream_name(trace);

  auto it = std::back_inserter(out);
  out.append(std::string_view("{\"traceEvents\":["));
  bool first = true;
  auto next = [&] {
    out.append(std::string_view(first ? "\n" : ",\n"));
    first = false;
  };
  auto name_rank = [&](std::uint32_t rank) {
    next();
    fmt::format_to(it, FMT_COMPILE("{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"rank {}\"}}}}"), rank, rank);
    next();
    fmt::format_to(it, FMT_COMPILE("{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"sort_index\":{}}}}}"),
                   rank, rank);
    for (const std::uint32_t stream : streams) {
      next();
      fmt::format_to(it, FMT_COMPILE("{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":"), rank,
                     stream);
      append_json_string(out, stream_name(stream));
      out.append(std::string_view("}}"));
    }
    spill(out);
  };
  const ListedRanks listed(trace);
  for (const std::uint32_t rank : listed.ranks()) name_rank(rank);
  for (const std::uint32_t rank : extra_ranks) name_rank(rank);
  // The events of every part, then its memory samples: the parts hold the
  // events before the samples, so this is the trace's order.
  parts.for_each_part([&](const proto::Trace& part, std::uint64_t) {
    for (const OpEventRef e : events_of(part)) {
      next();
      append_op_event(out, e, stream_name);
      spill(out);
    }
    for (const proto::MemorySample& m : part.memory()) {
      if (!listed.contains(m.rank())) continue;
      next();
      out.append(std::string_view("{\"name\":\"memory\",\"cat\":\"memory\",\"ph\":\"C\",\"ts\":"));
      append_microseconds(out, m.time_ns());
      fmt::format_to(it, FMT_COMPILE(",\"pid\":{},\"args\":{{\"bytes\":{}}}}}"), m.rank(), m.bytes());
      spill(out);
    }
  });
  out.append(std::string_view("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"scenario\":"));
  append_json_string(out, trace.scenario());
  out.append(std::string_view(",\"strategy\":"));
  append_json_string(out, trace.strategy());
  out.append(std::string_view(",\"engine\":"));
  append_json_string(out, trace.engine());
  fmt::format_to(it, FMT_COMPILE(",\"num_ranks\":\"{}\",\"step_time_ns\":\"{}\",\"memory_limit_bytes\":\"{}\"}}}}\n"),
                 trace.num_ranks(), trace.step_time_ns(), trace.memory_limit_bytes());
}

}  // namespace

std::string chrome_trace_json(const proto::Trace& trace) {
  Buffer out;
  out.reserve(static_cast<std::size_t>(events_of(trace).size()) * 200 + static_cast<std::size_t>(trace.memory_size()) * 80 +
              static_cast<std::size_t>(trace.num_ranks()) * 400 + 256);
  emit_chrome_trace(TraceInMemory(trace), out, [](Buffer&) {});
  return fmt::to_string(out);
}

void write_chrome_trace(const TraceParts& trace, const std::filesystem::path& path) {
  AtomicFileWriter file(path);
  Buffer out;
  emit_chrome_trace(trace, out, [&](Buffer& b) { flush_if_full(b, file); });
  file.write(std::string_view(out.data(), out.size()));
  file.commit();
}

void write_chrome_trace(const proto::Trace& trace, const std::filesystem::path& path) {
  write_chrome_trace(TraceInMemory(trace), path);
}

}  // namespace eppsim
