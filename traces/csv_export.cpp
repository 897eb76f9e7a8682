#include "traces/csv_export.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string_view>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "base/atomic_file.h"
#include "base/proto_io.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

using Buffer = fmt::memory_buffer;

// "FORWARD" -> "forward"; "" for the UNSPECIFIED value (number 0); the number
// for a value this build does not know.
template <typename Enum, typename NameOf>
void append_enum(Buffer& out, Enum value, NameOf name_of) {
  if (static_cast<int>(value) == 0) return;
  const std::string& name = name_of(value);
  if (name.empty()) {
    fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}"), static_cast<int>(value));
    return;
  }
  for (const char c : name) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
}

void append_field(Buffer& out, std::string_view text) {
  const std::string field = csv_field(text);
  out.append(field);
}

// Nanoseconds as seconds with 9 decimals, exactly: "0.000001500".
void append_seconds(Buffer& out, std::int64_t ns) {
  const bool negative = ns < 0;
  const std::uint64_t magnitude = negative ? std::uint64_t{0} - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}{}.{:09}"), negative ? "-" : "", magnitude / 1000000000, magnitude % 1000000000);
}

}  // namespace

std::string csv_seconds(std::int64_t ns) {
  Buffer out;
  append_seconds(out, ns);
  return std::string(out.data(), out.size());
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

namespace {

// The rows into `out`, calling `spill(out)` after each (see emit_chrome_trace).
template <class Spill>
void emit_ops_csv(const proto::Trace& trace, Buffer& out, Spill spill) {
  auto it = std::back_inserter(out);
  out.append(std::string_view(
      "rank,op,stream,kind,phase,collective,chunk,stage,peer,group,size_bytes,start_s,end_s,duration_s\n"));
  for (const OpEventRef e : events_of(trace)) {
    fmt::format_to(it, FMT_COMPILE("{},{},"), e.rank(), e.op());
    if (e.stream() < static_cast<std::uint32_t>(trace.stream_names_size())) {
      append_field(out, trace.stream_names(static_cast<int>(e.stream())));
    } else {
      fmt::format_to(it, FMT_COMPILE("{}"), e.stream());
    }
    out.push_back(',');
    append_enum(out, e.kind(), [](proto::OpKind k) -> const std::string& { return proto::OpKind_Name(k); });
    out.push_back(',');
    append_enum(out, e.phase(), [](proto::Phase p) -> const std::string& { return proto::Phase_Name(p); });
    out.push_back(',');
    append_enum(out, e.collective(),
                [](proto::CollectiveKind k) -> const std::string& { return proto::CollectiveKind_Name(k); });
    fmt::format_to(it, FMT_COMPILE(",{},{},{},{},{},"), e.chunk(), e.stage(), e.peer(), e.group(), e.size_bytes());
    append_seconds(out, e.start_ns());
    out.push_back(',');
    append_seconds(out, e.end_ns());
    out.push_back(',');
    append_seconds(out, e.end_ns() - e.start_ns());
    out.push_back('\n');
    spill(out);
  }
}

template <class Spill>
void emit_memory_csv(const proto::Trace& trace, Buffer& out, Spill spill) {
  auto it = std::back_inserter(out);
  out.append(std::string_view("rank,time_s,bytes\n"));
  for (const proto::MemorySample& m : trace.memory()) {
    fmt::format_to(it, FMT_COMPILE("{},"), m.rank());
    append_seconds(out, m.time_ns());
    fmt::format_to(it, FMT_COMPILE(",{}\n"), m.bytes());
    spill(out);
  }
}

// Streams `emit` into `path` in bounded pieces, atomically.
template <class Emit>
void write_streamed(const std::filesystem::path& path, Emit emit) {
  AtomicFileWriter file(path);
  Buffer out;
  emit(out, [&](Buffer& b) { flush_if_full(b, file); });
  file.write(std::string_view(out.data(), out.size()));
  file.commit();
}

}  // namespace

std::string ops_csv(const proto::Trace& trace) {
  Buffer out;
  out.reserve(static_cast<std::size_t>(events_of(trace).size()) * 96 + 128);
  emit_ops_csv(trace, out, [](Buffer&) {});
  return fmt::to_string(out);
}

void write_ops_csv(const proto::Trace& trace, const std::filesystem::path& path) {
  write_streamed(path, [&](Buffer& out, auto spill) { emit_ops_csv(trace, out, spill); });
}

std::string memory_csv(const proto::Trace& trace) {
  Buffer out;
  out.reserve(static_cast<std::size_t>(trace.memory_size()) * 40 + 32);
  emit_memory_csv(trace, out, [](Buffer&) {});
  return fmt::to_string(out);
}

void write_memory_csv(const proto::Trace& trace, const std::filesystem::path& path) {
  write_streamed(path, [&](Buffer& out, auto spill) { emit_memory_csv(trace, out, spill); });
}

std::string ranks_csv(const proto::Report& report) {
  Buffer out;
  auto it = std::back_inserter(out);
  out.append(std::string_view("rank,node,compute_s,recompute_s,communication_s,bubble_s,peak_memory_bytes\n"));
  for (const proto::RankReport& r : report.per_rank()) {
    const proto::Breakdown& b = r.breakdown_s();
    // Byte counts are whole numbers carried in doubles (see report.proto).
    fmt::format_to(it, FMT_COMPILE("{},{},{:.9f},{:.9f},{:.9f},{:.9f},{:.0f}\n"), r.rank(), r.node(), b.compute(), b.recompute(),
                   b.communication(), b.bubble(), r.peak_memory_bytes());
  }
  return fmt::to_string(out);
}

void write_ranks_csv(const proto::Report& report, const std::filesystem::path& path) {
  write_file_atomically(path, ranks_csv(report));
}

}  // namespace eppsim
