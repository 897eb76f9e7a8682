#pragma once
// Replay: a recorded step re-timed on another cluster, the what-if path for
// "same job, other network" (`eppsim replay`).
//
// The input is a Trace (trace.pb of `eppsim run`/`sim`, or of eppsim-run,
// measured) with the Schedule it ran (schedule.pb beside the trace unless
// named), or a Chakra prefix (its nodes' durations are the recording). Compute
// keeps its recorded durations scaled by the GPU ratio, recorded peak FLOP/s
// over the new cluster's (the recorded cluster: scenario.textproto beside the
// trace unless named; a Chakra trace without one is not scaled), or is
// re-priced by the new cluster's cost model; communication is always
// re-simulated on the new network by the chosen engine.
#include <filesystem>
#include <optional>

#include "models/gpu_spec.h"
#include "sim/run.h"
#include "scenario/scenario.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"
#include "schedule/trace_parts.h"

namespace eppsim {

// A schedule and the cluster to run it on. `eppsim sim` and `eppsim replay`
// read either a Schedule file or a Chakra prefix (a path with no file of its
// own but PREFIX.0.et beside it; traces/chakra/chakra_stream.h).
struct ScheduleOnCluster {
  proto::Schedule schedule;
  ResolvedScenario cluster;
};

// Reads `schedule_path` (a Schedule in .pb, .json or .textproto, or a Chakra
// prefix whose groups come from `comm_groups`, or PREFIX.comm_groups.json when
// it exists) and resolves `cluster` for it (cluster_for_schedule). A Chakra
// COMP node without a duration is priced by the roofline of `roofline_gpu`
// (default: the cluster's GPU).
ScheduleOnCluster load_schedule_on_cluster(const std::filesystem::path& schedule_path, const ParsedScenario& cluster,
                                           const std::optional<std::filesystem::path>& comm_groups = std::nullopt,
                                           const GpuSpec* roofline_gpu = nullptr);

enum class ReplayCompute { Recorded, CostModel };

// `--compute` text: "recorded" or "cost-model"; anything else is an InputError.
ReplayCompute parse_replay_compute(std::string_view text);

// The schedule re-timed for `target`:
//   Recorded: every COMPUTE op takes DURATION_FIXED = its recorded duration /
//     gpu_speedup (rounded to the nanosecond). The recorded duration is its
//     event's in `recorded` when given (each COMPUTE op must have one), else
//     the op's fixed duration, else its estimate.
//   CostModel: a COMPUTE op with work the cost model prices (layers, segments,
//     or an optimizer step) takes DURATION_FROM_WORK; one with only flops and
//     memory traffic (an imported trace) the roofline of the target's GPU.
// SEND, RECV and COLLECTIVE ops take DURATION_FROM_WORK (the network prices
// them); MEMORY ops are unchanged. Errors name the rank and op.
proto::Schedule retime_schedule(proto::Schedule schedule, const TraceParts* recorded, double gpu_speedup,
                                ReplayCompute compute, const ResolvedScenario& target);

struct ReplayRequest {
  std::filesystem::path input;                          // a trace file or a Chakra prefix
  std::optional<std::filesystem::path> schedule;        // default: schedule.pb beside the trace
  std::optional<std::filesystem::path> recorded_cluster;  // default: scenario.textproto beside the trace
  std::optional<std::filesystem::path> comm_groups;     // a Chakra prefix's communicator groups
  ReplayCompute compute = ReplayCompute::Recorded;
};

// Re-times the recording on `target` and simulates it (simulate_schedule):
// the result is what `eppsim sim` gives, written by write_run_directory.
RunResult replay(const ReplayRequest& request, const ParsedScenario& target);

}  // namespace eppsim
