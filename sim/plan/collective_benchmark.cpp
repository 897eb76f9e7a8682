#include "sim/plan/collective_benchmark.h"

#include <numeric>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "models/comm_kind.h"
#include "schedule/op_cost.h"
#include "sim/plan/planner.h"
#include "sim/plan/schedule_builder.h"

namespace eppsim {

proto::Schedule plan_collective_benchmark(const ResolvedScenario& scenario) {
  if (!scenario.workload.collective) throw std::logic_error(fmt::format("{}: not a collective benchmark", scenario.source));
  const CollectiveBenchmarkSpec& b = *scenario.workload.collective;
  const std::optional<TransformerSpec> model =
      scenario.model.name.empty() ? std::nullopt : std::optional<TransformerSpec>(scenario.model);
  ScheduleBuilder builder(b.group_size, scenario.proto.name(), std::string(kCollectiveStrategy), model);
  for (std::uint32_t rank = 0; rank < b.group_size; ++rank) {
    const std::uint32_t gpu = rank * b.stride;  // the gpu-th usable GPU, node-major
    builder.place(rank, scenario.node_of_rank(gpu), scenario.cluster.local_gpu_of(gpu));
  }
  const std::uint32_t comm = builder.stream("comm");
  std::vector<std::uint32_t> members(b.group_size);
  std::iota(members.begin(), members.end(), 0u);
  const std::uint32_t group = builder.add_group(fmt::format("{} members", b.group_size), std::move(members));
  const std::uint64_t base = b.size.count / b.chunks;
  const std::uint64_t remainder = b.size.count % b.chunks;
  for (std::uint32_t rank = 0; rank < b.group_size; ++rank) {
    for (std::uint32_t iteration = 0; iteration < b.iterations; ++iteration) {
      for (std::uint32_t chunk = 0; chunk < b.chunks; ++chunk) {
        builder.collective(rank, comm, {}, b.kind, group, base + (chunk < remainder ? 1 : 0), b.algorithm);
      }
    }
  }
  PlanSummary summary;
  summary.micro_batches = b.chunks * b.iterations;
  auto* decisions = builder.summary()->mutable_decisions();
  decisions->set_reproduces("nccl-tests");
  decisions->set_data_parallel(1);
  decisions->set_chunks(b.chunks * b.iterations);
  return finish_plan(builder, scenario, summary, kCollectiveStrategy, [](std::uint32_t) { return std::string(); }, "");
}

proto::CollectiveReport collective_report(const CollectiveBenchmarkSpec& b, double step_time_s) {
  const auto kind = to_model(b.kind);
  const double size = static_cast<double>(b.size.count);
  proto::CollectiveReport report;
  report.set_kind(proto::CollectiveKind_Name(b.kind));
  report.set_algorithm(proto::CollectiveAlgorithm_Name(b.algorithm));
  report.set_ranks(b.group_size);
  report.set_size_bytes(size);
  report.set_chunks(b.chunks);
  report.set_iterations(b.iterations);
  const double time = step_time_s / b.iterations;
  report.set_time_s(time);
  report.set_algbw_bps(time > 0 ? algbw_bytes(kind, b.group_size, size) / time : 0.0);
  report.set_busbw_bps(time > 0 ? bus_bytes(kind, b.group_size, size) / time : 0.0);
  return report;
}

}  // namespace eppsim
