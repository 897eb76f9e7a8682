#pragma once
// One Trace from the per-rank traces of a run: every rank records on its own
// step clock (runtime/step_clock.h), and rank 0 maps each onto its own with an
// offset measured by ping-pongs (the exchange with the smallest round trip
// wins: its midpoint is the least uncertain, within half that round trip).
// No MPI here: runtime/mpi/clock_sync.h measures and gathers.
#include <cstdint>
#include <span>

#include "proto/trace.pb.h"

namespace eppsim::runtime {

// One ping-pong between the reference rank and a peer: the reference sent at
// `sent_s` and got the answer at `received_s` (its clock); the peer read its
// clock, `peer_s`, when the ping arrived and sent that back.
struct PingPong {
  double sent_s = 0.0;
  double peer_s = 0.0;
  double received_s = 0.0;
  double round_trip_s() const { return received_s - sent_s; }
};

// The offset to add to a time on the peer's clock to get the reference's:
// from the ping-pong with the smallest round trip, (sent + received) / 2 - peer.
// std::invalid_argument when `exchanges` is empty.
double estimate_clock_offset(std::span<const PingPong> exchanges);

// The first and last moment of a rank's step on its own clock.
struct RankSpan {
  double start_s = 0.0;
  double end_s = 0.0;
};

// The step's length on the reference clock: the latest end minus the earliest
// start, each rank's span shifted by its offset. Sizes must agree.
double merged_step_time_s(std::span<const RankSpan> spans, std::span<const double> offsets_s);

// A rank's span in its own trace (both 0 without events).
RankSpan trace_span(const proto::Trace& trace);

// Per-rank traces on one clock: traces[i] holds the events and memory samples
// of rank ranks[i] (empty `ranks`: of rank i) on its own clock, shifted by
// offsets_s[i] onto the reference clock. Scenario, strategy, engine, stream
// names and memory limit come from traces[0]; num_ranks is the number of
// traces; step_time_ns is not set. std::invalid_argument when the sizes differ
// or a trace holds another rank's events.
proto::Trace merge_onto_clock(std::span<const proto::Trace> traces, std::span<const double> offsets_s,
                              std::span<const std::uint32_t> ranks = {});

// merge_onto_clock with traces[r] of rank r, then every time shifted by the
// same amount so that the earliest start is 0; step_time_ns is the latest end
// minus the earliest start.
proto::Trace merge_traces(std::span<const proto::Trace> traces, std::span<const double> offsets_s);

}  // namespace eppsim::runtime
