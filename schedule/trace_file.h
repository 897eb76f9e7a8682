#pragma once
// Reading and writing a Trace in any form eppsim writes: a trace file
// (`trace.pb`, or the same Trace as `.json` or `.textproto`; simulated by
// `eppsim run`, measured by `eppsim-run`), or a run directory (its
// `trace.pb`). A Chrome trace (`trace.json` of a run directory, `eppsim
// export chrome`) is for viewers and cannot be read back: that is an
// InputError saying so.
//
// A binary trace file is a message stream (base/message_stream.h), so no size
// of trace fails at the write: a part holds the trace's fields but its op
// events, memory samples and busy figures, then parts hold slices of those,
// kMessageStreamPartBytes or so each. The single-message form written before
// (one binary Trace, at most 2 GiB) is still read. Commands read a trace
// file a part at a time (TraceFile below), so no size of trace is held whole.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/message_stream.h"
#include "proto/trace.pb.h"
#include "schedule/trace_parts.h"

namespace eppsim {

// Besides num_ranks <= limits::kMaxRanks (base/input_limits.h), a Trace's
// rank streams are bounded when it is read: the exports write a row per rank
// and stream (the Chrome trace names every stream of every rank), so a few
// bytes declaring millions of ranks and streams would otherwise make
// gigabytes. 2^22 rank streams: num_ranks x (stream_names + streams the
// events use beyond them), 200k ranks with 20 streams.
inline constexpr std::uint64_t kMaxTraceRankStreams = std::uint64_t{1} << 22;

// The trace file `path` names: `path` itself, or `path/trace.pb` for a
// directory. Throws InputError when a directory holds no trace.pb.
std::filesystem::path trace_file_of(const std::filesystem::path& path);

// The Trace at `path` (see above), read a part at a time (TraceParts): the
// header when opened, the parts at each visit, each part checked as it is
// read, and what needs every event (the step's span, the bounds above) after
// the last. A file of the single-message form or in text is read whole when
// opened. InputError naming the file, the field and the rule.
class TraceFile final : public TraceParts {
 public:
  // `held_bytes_per_file_byte`: what the command keeps of the parts, per byte
  // of a stream file, for the memory guard (base/memory_limit.h) beside the
  // part it reads (0 for a command that writes each part as it comes).
  TraceFile(const std::filesystem::path& path, double held_bytes_per_file_byte);
  ~TraceFile() override;
  const proto::Trace& header() const override { return header_; }
  void for_each_part(const std::function<void(const proto::Trace& part, std::uint64_t first_event)>& visit)
      const override;
  const std::string& name() const override { return name_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  std::string name_;
  proto::Trace header_;
  bool first_part_has_slices_ = false;
  std::unique_ptr<proto::Trace> whole_;  // the single-message form, read whole
};

// Reads the whole Trace at `path` (see TraceFile), strictly, and checks the
// bounds above.
proto::Trace read_trace(const std::filesystem::path& path);

// Writes `trace` to `path` atomically: a message stream for a binary file
// (parts of about `part_bytes`), else write_message's text or JSON.
// std::runtime_error naming the path.
void write_trace_file(const proto::Trace& trace, const std::filesystem::path& path,
                      std::size_t part_bytes = kMessageStreamPartBytes);

// Throws InputError when `trace` (read from `path`) is partial (its step did
// not complete: a simulated fault, or an interrupted run's kept trace):
// `what` (e.g. "diff") needs a whole step; `eppsim export` shows a partial one.
void require_complete_trace(const proto::Trace& trace, const std::filesystem::path& path, std::string_view what);

// Throws InputError when `trace` (read from `path`) lists the op events of
// some ranks only: `what` (e.g. "replay") needs every rank's.
void require_every_rank(const proto::Trace& trace, const std::filesystem::path& path, std::string_view what);

// Throws InputError when traces `a` and `b` list the op events of different
// ranks: `what` (e.g. "diff") compares them op by op.
void require_same_ranks(const proto::Trace& a, std::string_view a_name, const proto::Trace& b, std::string_view b_name,
                        std::string_view what);

}  // namespace eppsim
