#include "schedule/trace_file.h"

#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/message_stream.h"
#include "base/proto_io.h"
#include "schedule/trace_events.h"

namespace eppsim {
namespace {

// Chrome traces are JSON objects whose first key is "traceEvents" (ours: see
// chrome_trace.h), or a bare JSON array of events.
bool looks_like_chrome_trace(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[256] = {};
  in.read(head, sizeof(head) - 1);
  const std::string_view text(head, static_cast<std::size_t>(in.gcount()));
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return false;
  if (text[first] == '[') return true;
  return text[first] == '{' && text.find("\"traceEvents\"") != std::string_view::npos;
}

void check_trace_bounds(const proto::Trace& trace, const std::filesystem::path& file) {
  const auto declared = static_cast<std::uint32_t>(trace.stream_names_size());
  std::set<std::uint32_t> undeclared;
  for (const auto stream : trace.op_events().stream()) {
    if (stream >= declared) undeclared.insert(stream);
  }
  const std::uint64_t streams = std::uint64_t{declared} + undeclared.size();
  if (std::uint64_t{trace.num_ranks()} * streams > kMaxTraceRankStreams) {
    throw InputError(fmt::format("{}: num_ranks x streams: must be at most {}, got {} ranks x {} streams (stream_names "
                                 "and the streams events use beyond them)",
                                 file.string(), kMaxTraceRankStreams, trace.num_ranks(), streams));
  }
}

// Every event lies in the step: it starts at 0 or later, ends no earlier than
// it starts and, in a step that completed, no later than step_time_ns after
// the earliest start (the step's start: 0 in what eppsim and eppsim-run write;
// validate measures from it too). The exports, diff and validate draw and
// subtract these times.
void check_event_times(const proto::Trace& trace, const std::filesystem::path& file) {
  const auto& starts = trace.op_events().start_ns();
  const auto& ends = trace.op_events().end_ns();
  const bool complete = !trace.has_incomplete();
  const std::int64_t origin = starts.empty() ? 0 : *std::min_element(starts.begin(), starts.end());
  for (int i = 0; i < starts.size(); ++i) {
    if (starts[i] < 0) {
      throw InputError(fmt::format("{}: op_events.start_ns[{}]: must be >= 0 (the step starts at 0), got {}",
                                   file.string(), i, starts[i]));
    }
    if (ends[i] < starts[i]) {
      throw InputError(fmt::format("{}: op_events.end_ns[{}]: must be >= its start_ns ({}), got {}", file.string(), i,
                                   starts[i], ends[i]));
    }
    if (complete && ends[i] - origin > trace.step_time_ns()) {
      throw InputError(fmt::format("{}: op_events.end_ns[{}]: must be at most step_time_ns ({}) after the earliest "
                                   "start ({}): an op cannot outlast the step, got {}",
                                   file.string(), i, trace.step_time_ns(), origin, ends[i]));
    }
  }
}

// The events [begin, end) of `columns`, as a part of a trace stream.
proto::Trace event_slice(const proto::OpEvents& columns, int begin, int end) {
  proto::Trace part;
  auto& slice = *part.mutable_op_events();
  const auto copy = [&](const auto& from, auto* to) { to->Add(from.begin() + begin, from.begin() + end); };
  copy(columns.rank(), slice.mutable_rank());
  copy(columns.op(), slice.mutable_op());
  copy(columns.stream(), slice.mutable_stream());
  copy(columns.kind(), slice.mutable_kind());
  copy(columns.phase(), slice.mutable_phase());
  copy(columns.collective(), slice.mutable_collective());
  copy(columns.chunk(), slice.mutable_chunk());
  copy(columns.stage(), slice.mutable_stage());
  copy(columns.peer(), slice.mutable_peer());
  copy(columns.group(), slice.mutable_group());
  copy(columns.size_bytes(), slice.mutable_size_bytes());
  copy(columns.start_ns(), slice.mutable_start_ns());
  copy(columns.end_ns(), slice.mutable_end_ns());
  return part;
}

}  // namespace

void write_trace_file(const proto::Trace& trace, const std::filesystem::path& path) {
  if (proto_format_for(path) != ProtoFormat::Binary) return write_message(trace, path);
  MessageStreamWriter stream(path, trace.GetDescriptor()->full_name());
  stream.write_part(*message_without_fields(trace, {proto::Trace::kEventsFieldNumber, proto::Trace::kMemoryFieldNumber,
                                                    proto::Trace::kOpEventsFieldNumber, proto::Trace::kBusyFieldNumber}));
  // An event takes some 25 bytes in a part (13 varints).
  constexpr int kEventsPerPart = static_cast<int>(kMessageStreamPartBytes / 25);
  const int events = trace.op_events().rank_size();
  for (int begin = 0; begin < events; begin += kEventsPerPart) {
    stream.write_part(event_slice(trace.op_events(), begin, std::min(events, begin + kEventsPerPart)));
  }
  write_slices<proto::Trace>(stream, trace.events(), [](proto::Trace& part) { return part.add_events(); });
  write_slices<proto::Trace>(stream, trace.memory(), [](proto::Trace& part) { return part.add_memory(); });
  write_slices<proto::Trace>(stream, trace.busy(), [](proto::Trace& part) { return part.add_busy(); });
  stream.commit();
}

std::filesystem::path trace_file_of(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_directory(path, error)) return path;
  const auto file = path / "trace.pb";
  if (!std::filesystem::exists(file, error)) {
    throw InputError(fmt::format("{}: a directory without trace.pb (a run directory written with --outputs "
                                 "none or without trace?); give a trace file or a run directory with its trace",
                                 path.string()));
  }
  return file;
}

proto::Trace read_trace(const std::filesystem::path& path) {
  const auto file = trace_file_of(path);
  std::error_code error;  // not a regular file (a FIFO would block the peek): read_message says what is wrong
  if (file.extension() == ".json" && std::filesystem::is_regular_file(file, error) && looks_like_chrome_trace(file)) {
    throw InputError(fmt::format("{}: a Chrome trace (for viewers such as Perfetto), which eppsim cannot read back; "
                                 "give the run's trace.pb or its run directory",
                                 file.string()));
  }
  proto::Trace trace;
  if (is_message_stream(file)) {
    read_message_stream(file, &trace);
  } else {
    read_message(file, &trace);
  }
  // Checked before anything is sized by num_ranks or indexed by an event's rank.
  check_num_ranks(trace, trace.num_ranks(), file);
  // A trace of the form before op_events names its events' fields as its file does.
  for (int i = 0; i < trace.events_size(); ++i) {
    if (trace.events(i).rank() >= trace.num_ranks()) {
      throw InputError(fmt::format("{}: events[{}].rank: must be < num_ranks ({}), got {}", file.string(), i,
                                   trace.num_ranks(), trace.events(i).rank()));
    }
  }
  convert_event_messages(trace, file.string());
  check_event_columns(trace, file.string());
  const auto& ranks = trace.op_events().rank();
  for (int i = 0; i < ranks.size(); ++i) {
    if (ranks[i] >= trace.num_ranks()) {
      throw InputError(fmt::format("{}: op_events.rank[{}]: must be < num_ranks ({}), got {}", file.string(), i,
                                   trace.num_ranks(), ranks[i]));
    }
  }
  // A trace of ranks of interest: ascending ranks of the trace, which list
  // every event.
  if (trace.traced_ranks_size() > 0) {
    std::vector<bool> listed(trace.num_ranks(), false);
    for (int i = 0; i < trace.traced_ranks_size(); ++i) {
      const auto r = trace.traced_ranks(i);
      if (r >= trace.num_ranks()) {
        throw InputError(fmt::format("{}: traced_ranks[{}]: must be < num_ranks ({}), got {}", file.string(), i,
                                     trace.num_ranks(), r));
      }
      if (i > 0 && r <= trace.traced_ranks(i - 1)) {
        throw InputError(fmt::format("{}: traced_ranks[{}]: must be ascending without repeats, got {} after {}",
                                     file.string(), i, r, trace.traced_ranks(i - 1)));
      }
      listed[r] = true;
    }
    for (int i = 0; i < ranks.size(); ++i) {
      if (!listed[ranks[i]]) {
        throw InputError(fmt::format("{}: op_events.rank[{}]: rank {} is not one of traced_ranks", file.string(), i,
                                     ranks[i]));
      }
    }
  }
  check_event_times(trace, file);
  for (int i = 0; i < trace.memory_size(); ++i) {
    if (trace.memory(i).rank() >= trace.num_ranks()) {
      throw InputError(fmt::format("{}: memory[{}].rank: must be < num_ranks ({}), got {}", file.string(), i,
                                   trace.num_ranks(), trace.memory(i).rank()));
    }
  }
  check_trace_bounds(trace, file);
  return trace;
}

void require_complete_trace(const proto::Trace& trace, const std::filesystem::path& path, std::string_view what) {
  if (trace.has_incomplete()) {
    const auto& incomplete = trace.incomplete();
    throw InputError(fmt::format("{}: incomplete: a partial trace ({}; {} of {} ops finished): {} needs a whole step; "
                                 "`eppsim export` shows what finished",
                                 path.string(), incomplete.reason(), incomplete.ops_done(), incomplete.ops_total(),
                                 what));
  }
}

void require_every_rank(const proto::Trace& trace, const std::filesystem::path& path, std::string_view what) {
  if (trace.traced_ranks_size() == 0) return;
  throw InputError(fmt::format("{}: traced_ranks: the trace lists the op events of {} of its {} ranks (eppsim run "
                               "--trace-ranks, or its default on a large step); {} needs every rank's: rerun with "
                               "--trace-ranks all",
                               path.string(), trace.traced_ranks_size(), trace.num_ranks(), what));
}

void require_same_ranks(const proto::Trace& a, std::string_view a_name, const proto::Trace& b, std::string_view b_name,
                        std::string_view what) {
  if (a.traced_ranks_size() == 0 && b.traced_ranks_size() == 0) return;  // every rank's, however many
  const auto in_a = listed_ranks(a), in_b = listed_ranks(b);
  if (in_a == in_b) return;
  const auto describe = [](const proto::Trace& t, const std::vector<std::uint32_t>& ranks) {
    return t.traced_ranks_size() == 0 ? fmt::format("every rank's ({})", t.num_ranks())
                                      : fmt::format("those of {} of {} ranks", ranks.size(), t.num_ranks());
  };
  throw InputError(fmt::format("{} and {}: traced_ranks: {} compares op events of the same ranks, but the first lists "
                               "{} and the second {}: run both with the same --trace-ranks (a list, or all)",
                               a_name, b_name, what, describe(a, in_a), describe(b, in_b)));
}

}  // namespace eppsim
