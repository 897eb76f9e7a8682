#pragma once
// Schedule ops priced by the cost model (models/cost_model.h): the one place
// that reads an op's fields into the model's terms. Honours the op's
// duration_source: DURATION_FIXED ops take fixed_duration_ns whatever the model.
#include <cstdint>
#include <span>
#include <vector>

#include "models/cost_model.h"
#include "schedule/program_ops.h"
#include "proto/schedule.pb.h"

namespace eppsim {

CommKind to_model(proto::CollectiveKind kind);
CollectiveAlgorithm to_model(proto::CollectiveAlgorithm algorithm);
LayerPart to_model(proto::LayerPart part);
Pass pass_of(proto::Phase phase);  // FORWARD, BACKWARD or RECOMPUTE

// Duration of a COMPUTE op: OPTIMIZER (and unspecified) phases by their memory
// traffic, the others by their work; `segments` is scratch space the returned
// work's chunk points into.
// `schedule` holds the op (for a shared compute op's work).
Seconds compute_duration(const CostModel& cost, const proto::Schedule& schedule, OpView op,
                         std::vector<Segment>& segments);
// The same for the op's compute fields alone (its duration_source not consulted).
Seconds compute_duration(const CostModel& cost, const proto::ComputeOp& compute, std::vector<Segment>& segments);
// What compute_duration(cost, compute, ...) reads of a compute op, compared
// and hashed: two works equal here take the same time on any cost model, so a
// schedule's many copies of one chunk's work (its pipelines' and replicas')
// can be priced once.
bool same_compute_duration_inputs(const proto::ComputeOp& a, const proto::ComputeOp& b);
std::uint64_t compute_duration_inputs_hash(const proto::ComputeOp& compute);
// Duration of a matched SEND/RECV pair (the send's op decides a fixed duration).
Seconds transfer_duration(const CostModel& cost, OpView send, std::uint32_t src_rank,
                          std::uint32_t dst_rank);
// Duration of a collective over `ranks` (the first member's op decides a fixed duration).
Seconds collective_duration(const CostModel& cost, OpView op, std::span<const std::uint32_t> ranks);
// The latency of that collective as the cost model prices it: its time at 0
// bytes (the algorithm's rounds of hop latencies; a calibration's fitted
// constant), the part of its duration that sharing endpoints does not stretch.
Seconds collective_latency(const CostModel& cost, OpView op, std::span<const std::uint32_t> ranks);

}  // namespace eppsim
