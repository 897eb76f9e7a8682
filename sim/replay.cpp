#include "sim/replay.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/log.h"
#include "traces/chakra/chakra_import.h"
#include "traces/chakra/chakra_stream.h"
#include "schedule/identical_replicas.h"
#include "schedule/program_ops.h"
#include "base/proto_io.h"
#include "schedule/schedule_file.h"
#include "schedule/shared_compute.h"
#include "schedule/trace_events.h"
#include "schedule/trace_file.h"

namespace eppsim {
namespace {

bool has_cost_model_work(const proto::ComputeOp& c) {
  return c.layer_count() > 0 || c.segment_tokens_size() > 0 || c.phase() == proto::OPTIMIZER;
}

std::int64_t roofline_ns(const proto::ComputeOp& c, const ResolvedScenario& target) {
  const double flops_s = c.flops() / target.cluster.gpu.peak_bf16.value;
  const double memory_s = static_cast<double>(c.memory_traffic_bytes()) / target.cluster.gpu.memory_bandwidth.value;
  return static_cast<std::int64_t>(std::llround(std::max(flops_s, memory_s) * 1e9));
}

// The GPU of a recorded cluster.
GpuSpec recorded_gpu(const std::filesystem::path& scenario) {
  return load_scenario(scenario, {}, ScenarioPart::Cluster).cluster.gpu;
}

}  // namespace

ScheduleOnCluster load_schedule_on_cluster(const std::filesystem::path& schedule_path, const ParsedScenario& cluster,
                                           const std::optional<std::filesystem::path>& comm_groups,
                                           const GpuSpec* roofline_gpu) {
  proto::Schedule schedule;
  if (is_chakra_prefix(schedule_path)) {
    const auto gpu = roofline_gpu != nullptr ? *roofline_gpu : resolve_cluster_part(cluster).cluster.gpu;
    ChakraImportOptions options;
    options.peak_flops_per_s = gpu.peak_bf16.value;
    options.memory_bytes_per_s = gpu.memory_bandwidth.value;
    schedule = import_chakra_prefix(schedule_path, options, comm_groups);
  } else {
    if (comm_groups) {
      throw InputError(fmt::format("--comm-groups: {} is not a Chakra prefix (no {})", schedule_path.string(),
                                   chakra_rank_path(schedule_path, 0).string()));
    }
    schedule = read_schedule_file(schedule_path);
  }
  auto resolved = cluster_for_schedule(cluster, schedule, schedule_path.string());
  return ScheduleOnCluster{std::move(schedule), std::move(resolved)};
}

ReplayCompute parse_replay_compute(std::string_view text) {
  if (text == "recorded") return ReplayCompute::Recorded;
  if (text == "cost-model") return ReplayCompute::CostModel;
  throw InputError(fmt::format("--compute: unknown value '{}' (known: recorded, cost-model)", text));
}

proto::Schedule retime_schedule(proto::Schedule schedule, const TraceParts* recorded, double gpu_speedup,
                                ReplayCompute compute, const ResolvedScenario& target) {
  if (!(gpu_speedup > 0.0)) throw InputError(fmt::format("replay: GPU speed-up must be > 0, got {}", gpu_speedup));
  // Per rank, per op of its program: the recorded COMPUTE event's duration,
  // -1 for none; the trace is read a part at a time.
  std::vector<std::vector<std::int64_t>> recorded_ns;
  if (recorded != nullptr) {
    if (recorded->header().num_ranks() != schedule.num_ranks()) {
      throw InputError(fmt::format("replay: the trace has {} ranks but the schedule {}: not the trace of this schedule",
                                   recorded->header().num_ranks(), schedule.num_ranks()));
    }
  }
  if (recorded != nullptr && compute == ReplayCompute::Recorded) {
    recorded_ns.resize(schedule.num_ranks());
    for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
      recorded_ns[r].assign(ops_of(schedule.programs(static_cast<int>(r))).size(), -1);
    }
    recorded->for_each_part([&](const proto::Trace& part, std::uint64_t) {
      for (const OpEventRef e : events_of(part)) {
        if (e.kind() != proto::COMPUTE || e.rank() >= recorded_ns.size() || e.op() >= recorded_ns[e.rank()].size()) continue;
        recorded_ns[e.rank()][e.op()] = e.end_ns() - e.start_ns();
      }
    });
  }
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) {
    auto& program = *schedule.mutable_programs(static_cast<int>(r));
    for (std::uint32_t i = 0; i < ops_of(program).size(); ++i) {
      const OpView op = ops_of(program)[i];
      const auto where = [&] { return fmt::format("replay: rank {} op {}", r, i); };
      if (op.is_send() || op.is_recv() || op.is_collective()) {
        set_duration(program, i, proto::DURATION_FROM_WORK, 0);
        continue;
      }
      if (!op.is_compute()) continue;
      const proto::ComputeOp& work = compute_of(schedule, op);
      if (compute == ReplayCompute::CostModel) {
        if (has_cost_model_work(work)) {
          set_duration(program, i, proto::DURATION_FROM_WORK, 0);
        } else if (work.flops() > 0 || work.memory_traffic_bytes() > 0) {
          set_duration(program, i, proto::DURATION_FIXED, roofline_ns(work, target));
        } else {
          throw InputError(fmt::format("{}: the compute op has no work (layers, flops or memory traffic) for the cost "
                                       "model to price; replay it with --compute recorded",
                                       where()));
        }
        continue;
      }
      std::int64_t ns = 0;
      if (recorded != nullptr) {
        ns = recorded_ns[r][i];
        if (ns < 0) {
          throw InputError(fmt::format("{}: the trace has no COMPUTE event for it: not the trace of this schedule", where()));
        }
      } else {
        ns = op.duration_source() == proto::DURATION_FIXED ? op.fixed_duration_ns() : work.estimated_duration_ns();
      }
      set_duration(program, i, proto::DURATION_FIXED, static_cast<std::int64_t>(std::llround(static_cast<double>(ns) / gpu_speedup)));
    }
  }
  return schedule;
}

RunResult replay(const ReplayRequest& request, const ParsedScenario& target) {
  const bool chakra = is_chakra_prefix(request.input);
  std::optional<TraceFile> trace;  // read a part at a time: what is kept is a duration per op
  std::filesystem::path schedule_path = request.input;
  std::optional<std::filesystem::path> recorded_cluster = request.recorded_cluster;
  if (!chakra) {
    trace.emplace(request.input, 0.0);
    require_complete_trace(trace->header(), request.input, "replay");
    require_every_rank(trace->header(), request.input, "replay");
    const auto dir = trace_file_of(request.input).parent_path();  // a run directory: its own files
    schedule_path = request.schedule.value_or(dir / "schedule.pb");
    if (!request.schedule && !std::filesystem::exists(schedule_path)) {
      throw InputError(fmt::format("replay: {} has no schedule.pb beside it (the run wrote none?); name the Schedule "
                                   "it ran with --schedule",
                                   request.input.string()));
    }
    if (!recorded_cluster) {
      recorded_cluster = dir / "scenario.textproto";
      if (!std::filesystem::exists(*recorded_cluster)) {
        throw InputError(fmt::format("replay: {} has no scenario.textproto beside it; name the cluster it was recorded "
                                     "on with --recorded-cluster",
                                     request.input.string()));
      }
    }
  } else if (request.schedule) {
    throw InputError(fmt::format("--schedule: a Chakra prefix ({}) is its own schedule", request.input.string()));
  }
  // A Chakra COMP node without a duration is "recorded" as the roofline of the recorded GPU.
  const std::optional<GpuSpec> recorded = recorded_cluster ? std::optional(recorded_gpu(*recorded_cluster)) : std::nullopt;
  auto loaded = load_schedule_on_cluster(schedule_path, target, request.comm_groups,
                                         recorded ? &*recorded : nullptr);
  // Each rank's recorded ops retime its own program.
  loaded.schedule = expand_identical_replicas(loaded.schedule);
  double speedup = 1.0;
  if (recorded) {
    speedup = loaded.cluster.cluster.gpu.peak_bf16.value / recorded->peak_bf16.value;
  } else if (request.compute == ReplayCompute::Recorded) {
    logging::info("replay", "{}: no recorded cluster named (--recorded-cluster): compute keeps its recorded durations",
                  request.input.string());
  }
  std::optional<proto::Schedule> retimed;
  try {
    retimed = retime_schedule(std::move(loaded.schedule), trace ? &*trace : nullptr, speedup, request.compute,
                              loaded.cluster);
  } catch (const InputError& e) {  // name the files: the trace and the schedule it is replayed with
    throw InputError(fmt::format("{} with {}: {}", request.input.string(), schedule_path.string(), e.what()));
  }
  return simulate_schedule(std::move(*retimed), loaded.cluster, 0.0, request.input.string());
}

}  // namespace eppsim
