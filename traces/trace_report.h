#pragma once
// From a Trace (simulated or measured) and its Schedule to the Report: step
// time, throughput, MFU, peak memory and the per-rank time breakdown.
//
// Per rank, over [0, step time]:
//   compute       time covered by forward, backward and optimizer ops
//   recompute     time covered by recompute ops and not by compute
//   communication time covered by send, recv and collective transfers while no
//                 compute or recompute runs (exposed communication)
//   bubble        the rest: the rank is idle, waiting on peers or dependencies
// so the four add up to the step time on every rank.
#include <cstdint>
#include <string>

#include "proto/report.pb.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"

namespace eppsim {

struct RunContext {
  std::string scenario;
  double peak_flops_per_gpu = 0.0;  // MFU denominator, per GPU
  std::uint64_t seed = 0;
  std::string network;  // Report.network
};

proto::Report build_report(const proto::Trace& trace, const proto::Schedule& schedule, const RunContext& context);

// The version string written into reports.
std::string eppsim_version();

}  // namespace eppsim
