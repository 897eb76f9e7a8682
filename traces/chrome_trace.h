#pragma once
// Chrome Trace Event JSON of a Trace, for Perfetto (ui.perfetto.dev) and
// chrome://tracing.
//
// One process per rank ("rank N"), one thread per stream (the trace's stream
// names). Every op is a complete event (ph "X") with ts and dur in
// microseconds (exact to the nanosecond), named like "F c3 s1" (forward of
// chunk 3 on stage 1), "B c3 s1", "R c3 s1", "send->5", "recv<-4",
// "all-reduce g2"; cat is the compute phase ("forward", "backward",
// "recompute", "optimizer") or the op kind ("send", "recv", "collective",
// "memory"); args carry op, stream, size_bytes and chunk/stage, peer or
// group/collective. Memory samples are counter events (ph "C") named "memory"
// with args {"bytes": N}. The schema is proto/chrome_trace.proto.
#include <filesystem>
#include <string>

#include "proto/trace.pb.h"
#include "schedule/trace_parts.h"

namespace eppsim {

std::string chrome_trace_json(const proto::Trace& trace);
// Streamed to the file in bounded pieces, atomically (base/atomic_file.h),
// holding a part of the trace at a time (two visits of its parts: the ranks
// and streams to name, then the events); std::runtime_error naming the path.
void write_chrome_trace(const TraceParts& trace, const std::filesystem::path& path);
void write_chrome_trace(const proto::Trace& trace, const std::filesystem::path& path);

}  // namespace eppsim
