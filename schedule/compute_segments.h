#pragma once
// A compute op's segments (schedule.proto: ComputeOp.segment_tokens and
// segment_context_tokens, one entry per segment in each): writing them,
// reading them as the cost models' Segments, and converting a Schedule of
// schema version 2, whose ops carried a Segment message each.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "models/chunk.h"
#include "proto/schedule.pb.h"

namespace eppsim {

// Appends `segment` to the op's segments.
void add_segment(proto::ComputeOp& op, const Segment& segment);

// The op's segments into `out`, which is cleared first. The two arrays must
// have one entry per segment each (validate_schedule checks it); should they
// not, the shorter one decides.
void read_segments(const proto::ComputeOp& op, std::vector<Segment>& out);
std::vector<Segment> segments_of(const proto::ComputeOp& op);

// The op's new tokens: the sum of its segments' tokens.
std::uint64_t new_tokens_of(const proto::ComputeOp& op);

// Moves the Segment messages of schema version 2 (ComputeOp.segments) into
// the packed arrays, after any already there, on every compute op: what a
// reader of Schedule files calls before validating one. Returns how many ops
// it converted.
std::size_t convert_segment_messages(proto::Schedule& schedule);

}  // namespace eppsim
