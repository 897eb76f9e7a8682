#pragma once
// The Schedule of a collective micro-benchmark (workload.collective), as
// nccl-tests runs one: the group's members are the Schedule's ranks, member i
// on usable GPU i x stride (node-major, as the default placement orders them);
// each rank's `comm` stream holds `iterations` x `chunks` collective ops over
// the one group, chunk c of bytes / chunks (the first bytes % chunks chunks one
// byte more), issued back to back. Any engine runs it; the report derives the
// iteration's time, algbw and busbw (collective_report below).
#include "proto/report.pb.h"
#include "scenario/scenario.h"
#include "proto/schedule.pb.h"

namespace eppsim {

// The Schedule of `scenario.collective` (which must be set), strategy
// kCollectiveStrategy; its header names the model only when the scenario has one.
proto::Schedule plan_collective_benchmark(const ResolvedScenario& scenario);

// One iteration's figures from the step time of the whole benchmark, as
// report.proto's CollectiveReport defines them.
proto::CollectiveReport collective_report(const CollectiveBenchmarkSpec& benchmark, double step_time_s);

}  // namespace eppsim
