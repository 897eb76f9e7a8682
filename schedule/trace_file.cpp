#include "schedule/trace_file.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "base/errors.h"
#include "base/memory_limit.h"
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

void write_trace_file(const proto::Trace& trace, const std::filesystem::path& path, std::size_t part_bytes) {
  if (proto_format_for(path) != ProtoFormat::Binary) return write_message(trace, path);
  MessageStreamWriter stream(path, trace.GetDescriptor()->full_name());
  stream.write_part(trace_header(trace));
  // An event takes some 25 bytes in a part (13 varints).
  const int events_per_part = static_cast<int>(std::max<std::size_t>(1, part_bytes / 25));
  const int events = trace.op_events().rank_size();
  for (int begin = 0; begin < events; begin += events_per_part) {
    stream.write_part(event_slice(trace.op_events(), begin, std::min(events, begin + events_per_part)));
  }
  write_slices<proto::Trace>(stream, trace.events(), [](proto::Trace& part) { return part.add_events(); }, part_bytes);
  write_slices<proto::Trace>(stream, trace.memory(), [](proto::Trace& part) { return part.add_memory(); }, part_bytes);
  write_slices<proto::Trace>(stream, trace.busy(), [](proto::Trace& part) { return part.add_busy(); }, part_bytes);
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

namespace {

// The rules a trace's reader checks: the header's when constructed, then
// `check_part` for each part in order, then `finish` for what needs every
// event. Errors name the file and the event's or sample's index in the
// whole trace.
class TraceChecks {
 public:
  TraceChecks(const proto::Trace& header, std::string file) : header_(header), file_(std::move(file)) {
    // Checked before anything is sized by num_ranks or indexed by an event's rank.
    check_num_ranks(header, header.num_ranks(), std::filesystem::path(file_));
    const auto num_ranks = header.num_ranks();
    // A trace of ranks of interest: ascending ranks of the trace, which list
    // every event.
    if (header.traced_ranks_size() > 0) {
      listed_.assign(num_ranks, false);
      for (int i = 0; i < header.traced_ranks_size(); ++i) {
        const auto r = header.traced_ranks(i);
        if (r >= num_ranks) {
          throw InputError(fmt::format("{}: traced_ranks[{}]: must be < num_ranks ({}), got {}", file_, i, num_ranks, r));
        }
        if (i > 0 && r <= header.traced_ranks(i - 1)) {
          throw InputError(fmt::format("{}: traced_ranks[{}]: must be ascending without repeats, got {} after {}", file_,
                                       i, r, header.traced_ranks(i - 1)));
        }
        listed_[r] = true;
      }
    }
  }

  // Checks `part` and converts its events of the form before op_events.
  void check_part(proto::Trace& part) {
    const auto num_ranks = header_.num_ranks();
    for (int i = 0; i < part.events_size(); ++i) {
      if (part.events(i).rank() >= num_ranks) {
        throw InputError(fmt::format("{}: events[{}].rank: must be < num_ranks ({}), got {}", file_,
                                     message_events_ + static_cast<std::uint64_t>(i), num_ranks, part.events(i).rank()));
      }
    }
    const bool has_columns = part.op_events().rank_size() > 0, has_messages = part.events_size() > 0;
    if ((has_messages && saw_columns_) || (has_columns && saw_messages_)) {
      throw InputError(fmt::format("{}: events: a trace lists its events in op_events or, as traces written before "
                                   "op_events did, in events, not both",
                                   file_));
    }
    saw_columns_ = saw_columns_ || has_columns;
    saw_messages_ = saw_messages_ || has_messages;
    message_events_ += static_cast<std::uint64_t>(part.events_size());
    convert_event_messages(part, file_);
    check_event_columns(part, file_);
    const auto& c = part.op_events();
    const bool complete = !header_.has_incomplete();
    for (int i = 0; i < c.rank_size(); ++i) {
      const std::uint64_t index = events_ + static_cast<std::uint64_t>(i);
      const auto rank = c.rank(i);
      if (rank >= num_ranks) {
        throw InputError(fmt::format("{}: op_events.rank[{}]: must be < num_ranks ({}), got {}", file_, index, num_ranks,
                                     rank));
      }
      if (!listed_.empty() && !listed_[rank]) {
        throw InputError(fmt::format("{}: op_events.rank[{}]: rank {} is not one of traced_ranks", file_, index, rank));
      }
      const std::int64_t start = c.start_ns(i), end = c.end_ns(i);
      if (start < 0) {
        throw InputError(fmt::format("{}: op_events.start_ns[{}]: must be >= 0 (the step starts at 0), got {}", file_,
                                     index, start));
      }
      if (end < start) {
        throw InputError(
            fmt::format("{}: op_events.end_ns[{}]: must be >= its start_ns ({}), got {}", file_, index, start, end));
      }
      earliest_start_ns_ = std::min(earliest_start_ns_, start);
      if (complete && end > latest_end_ns_) {
        latest_end_ns_ = end;
        latest_end_index_ = index;
      }
      if (c.stream(i) >= static_cast<std::uint32_t>(header_.stream_names_size())) undeclared_streams_.insert(c.stream(i));
    }
    events_ += static_cast<std::uint64_t>(c.rank_size());
    for (int i = 0; i < part.memory_size(); ++i) {
      if (part.memory(i).rank() >= num_ranks) {
        throw InputError(fmt::format("{}: memory[{}].rank: must be < num_ranks ({}), got {}", file_,
                                     samples_ + static_cast<std::uint64_t>(i), num_ranks, part.memory(i).rank()));
      }
    }
    samples_ += static_cast<std::uint64_t>(part.memory_size());
  }

  // What needs every event: the step's span, and the bound on rank streams.
  void finish() const {
    // Every event lies in the step: it ends, in a step that completed, no
    // later than step_time_ns after the earliest start (the step's start: 0
    // in what eppsim and eppsim-run write; validate measures from it too).
    // The exports, diff and validate draw and subtract these times.
    if (events_ > 0 && !header_.has_incomplete() && latest_end_ns_ - earliest_start_ns_ > header_.step_time_ns()) {
      throw InputError(fmt::format("{}: op_events.end_ns[{}]: must be at most step_time_ns ({}) after the earliest "
                                   "start ({}): an op cannot outlast the step, got {}",
                                   file_, latest_end_index_, header_.step_time_ns(), earliest_start_ns_, latest_end_ns_));
    }
    const auto declared = static_cast<std::uint64_t>(header_.stream_names_size());
    const std::uint64_t streams = declared + undeclared_streams_.size();
    if (std::uint64_t{header_.num_ranks()} * streams > kMaxTraceRankStreams) {
      throw InputError(fmt::format("{}: num_ranks x streams: must be at most {}, got {} ranks x {} streams "
                                   "(stream_names and the streams events use beyond them)",
                                   file_, kMaxTraceRankStreams, header_.num_ranks(), streams));
    }
  }

 private:
  const proto::Trace& header_;
  std::string file_;
  std::vector<bool> listed_;  // empty: every rank's events are listed
  std::uint64_t events_ = 0, message_events_ = 0, samples_ = 0;
  bool saw_columns_ = false, saw_messages_ = false;
  std::int64_t earliest_start_ns_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t latest_end_ns_ = std::numeric_limits<std::int64_t>::min();
  std::uint64_t latest_end_index_ = 0;
  std::set<std::uint32_t> undeclared_streams_;
};

// The header's fields of a trace stream are in its first part: a later part
// setting one would change what the parts before it were read with.
void check_sliced_fields_only(const proto::Trace& part, const MessageStreamReader& stream, const std::string& file) {
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  part.GetReflection()->ListFields(part, &fields);
  for (const auto* field : fields) {
    if (!is_sliced_trace_field(field->number())) {
      throw InputError(fmt::format("{}: not a valid stream of eppsim.proto.Trace: a part after the first sets {} (the "
                                   "header's fields are in the first part) (at byte {})",
                                   file, field->name(), stream.part_offset()));
    }
  }
}

// `part` with its header's fields cleared.
void keep_sliced_fields(proto::Trace& part) {
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  part.GetReflection()->ListFields(part, &fields);
  for (const auto* field : fields) {
    if (!is_sliced_trace_field(field->number())) part.GetReflection()->ClearField(&part, field);
  }
}

}  // namespace

TraceFile::TraceFile(const std::filesystem::path& path, double held_bytes_per_file_byte) : file_(trace_file_of(path)) {
  name_ = path.string();
  std::error_code error;  // not a regular file (a FIFO would block the peek): read_message says what is wrong
  if (file_.extension() == ".json" && std::filesystem::is_regular_file(file_, error) && looks_like_chrome_trace(file_)) {
    throw InputError(fmt::format("{}: a Chrome trace (for viewers such as Perfetto), which eppsim cannot read back; "
                                 "give the run's trace.pb or its run directory",
                                 file_.string()));
  }
  if (!is_message_stream(file_)) {
    // The single-message form (at most 2 GiB) or text: read whole, checked once.
    whole_ = std::make_unique<proto::Trace>();
    read_message(file_, whole_.get());
    header_ = trace_header(*whole_);
    keep_sliced_fields(*whole_);
    TraceChecks checks(header_, file_.string());
    checks.check_part(*whole_);
    checks.finish();
    return;
  }
  MessageStreamReader stream(file_, proto::Trace::descriptor()->full_name());
  // The guard: a part, and what the command keeps per byte of the file.
  check_memory_estimate(
      fmt::format("reading {} ({} bytes)", file_.string(), stream.file_bytes()),
      held_memory_bytes() + 3 * std::min<std::uint64_t>(stream.file_bytes(), kMessageStreamPartBytes) +
          static_cast<std::uint64_t>(held_bytes_per_file_byte * static_cast<double>(stream.file_bytes())),
      "read a smaller file, or raise --max-memory");
  // The first part is the header (what eppsim writes); slices in it are read
  // with the parts.
  stream.next_part(&header_);
  first_part_has_slices_ = header_.op_events().rank_size() > 0 || header_.events_size() > 0 ||
                           header_.memory_size() > 0 || header_.busy_size() > 0;
  header_ = trace_header(header_);
  TraceChecks checks(header_, file_.string());  // the header's own rules, before any part is read
}

TraceFile::~TraceFile() = default;

void TraceFile::for_each_part(const std::function<void(const proto::Trace& part, std::uint64_t first_event)>& visit)
    const {
  if (whole_) {
    visit(*whole_, 0);
    return;
  }
  MessageStreamReader stream(file_, proto::Trace::descriptor()->full_name());
  TraceChecks checks(header_, file_.string());
  proto::Trace part;
  std::uint64_t events = 0;
  bool first = true;
  while (stream.next_part(&part)) {
    if (first) {
      first = false;
      if (!first_part_has_slices_) continue;
      keep_sliced_fields(part);
    } else {
      check_sliced_fields_only(part, stream, file_.string());
    }
    checks.check_part(part);
    visit(part, events);
    events += static_cast<std::uint64_t>(part.op_events().rank_size());
  }
  checks.finish();
}

proto::Trace read_trace(const std::filesystem::path& path) {
  const TraceFile file(path, 3.0);
  proto::Trace trace = file.header();
  file.for_each_part([&](const proto::Trace& part, std::uint64_t) { trace.MergeFrom(part); });
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
