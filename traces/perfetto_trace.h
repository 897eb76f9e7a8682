#pragma once
// Perfetto's own trace format of a Trace: a stream of TracePackets with track
// events (proto/perfetto_trace.proto, a subset of Perfetto's schema with its
// field numbers), which the Perfetto UI (ui.perfetto.dev) and trace processor
// load far beyond the sizes Chrome JSON allows (traces/chrome_trace.h stays
// for small traces).
//
// Tracks, described first: per rank a process track "rank N" (pid N + 1; the
// ranks 0 .. num_ranks - 1 and any other that an event or memory sample
// names); under it a thread track per stream the rank's ops use, named by
// stream_names ("stream N" past them), with tids after every pid; and a
// counter track "memory" (bytes) when the rank has memory samples. Ops of one
// stream that overlap without nesting (A starts inside B and ends after it)
// go on further thread tracks "NAME (lane 2)", ..., so that the slices of
// every track nest.
//
// Events, in nondecreasing timestamp order: each op a TYPE_SLICE_BEGIN at
// start_ns and a TYPE_SLICE_END at end_ns on its thread track (at one time on
// one track: ends, then begins, a zero-length op's end right after its
// begin), named and categorised as the Chrome export does
// (traces/op_event_names.h) through interned names and categories, with debug
// annotations op, size_bytes (when not 0), chunk and stage (compute), peer
// (send, recv) or group (collectives); each memory sample a TYPE_COUNTER; an
// incomplete trace (Trace.incomplete) adds a root track "step incomplete" with
// one instant at stopped_ns named by its reason. A trace without op events (a
// summary's, Trace.busy) gives its tracks and memory counters alone.
//
// Packets: all on trusted_packet_sequence_id 1; the first clears incremental
// state (SEQ_INCREMENTAL_STATE_CLEARED), every track event needs it
// (SEQ_NEEDS_INCREMENTAL_STATE); interned data goes with the first packet
// that refers to it. The same Trace gives the same bytes.
#include <filesystem>

#include "proto/trace.pb.h"
#include "schedule/trace_parts.h"

namespace eppsim {

// Streamed packet by packet to the file, atomically (base/atomic_file.h).
// The trace is read a part at a time; what is held is a record of each op
// event (its times, place and name key: 56 bytes) and the index that orders
// them in time (36 bytes an event), never the file. Perfetto's timestamps are
// unsigned: a time before 0, or an op that ends before it starts, is an
// InputError naming the event; a failed write is a std::runtime_error naming
// the path and the system's error.
void write_perfetto_trace(const TraceParts& trace, const std::filesystem::path& path);
// What that holds per byte of a trace file (an event takes some 25 bytes
// there, 92 here), for TraceFile's memory guard.
inline constexpr double kPerfettoExportBytesPerTraceByte = 4.0;
void write_perfetto_trace(const proto::Trace& trace, const std::filesystem::path& path);

}  // namespace eppsim
