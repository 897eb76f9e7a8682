#include "sim/fault_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/units.h"

namespace eppsim {

proto::FaultReport fault_report(const FaultPlan& plan, const proto::Trace& faulty, const proto::Trace& healthy) {
  proto::FaultReport report;
  const bool completed = !faulty.has_incomplete();
  report.set_step_completed(completed);
  report.set_healthy_step_time_s(static_cast<double>(healthy.step_time_ns()) * 1e-9);
  double end_s = static_cast<double>(faulty.step_time_ns()) * 1e-9;
  if (completed) {
    if (report.healthy_step_time_s() > 0.0) report.set_slowdown(end_s / report.healthy_step_time_s());
  } else {
    const auto& incomplete = faulty.incomplete();
    end_s = static_cast<double>(incomplete.stopped_ns()) * 1e-9;
    report.set_stopped_at_s(end_s);
    report.set_stop_reason(incomplete.reason());
    report.set_ops_done_fraction(incomplete.ops_total() > 0 ? static_cast<double>(incomplete.ops_done()) /
                                                                  static_cast<double>(incomplete.ops_total())
                                                            : 0.0);
    for (const auto& line : incomplete.unfinished()) report.add_unfinished(line);
  }
  for (const EngineFault& f : plan.faults()) {
    auto* impact = report.add_injected();
    impact->set_kind(std::string(fault_kind_name(f.spec.kind)));
    impact->set_description(f.spec.description());
    impact->set_at_s(f.at_s);
    // A fault at the very end of a completed step changes nothing; one at the
    // stop of an incomplete step is what stopped it.
    impact->set_struck(completed ? f.at_s < end_s : f.at_s <= end_s);
    for (const auto r : f.ranks) impact->add_ranks(r);
  }
  return report;
}

void clear_step_figures(proto::Report& report) {
  report.clear_step_time_s();
  report.clear_tokens_per_s();
  report.clear_mfu();
}

std::string fault_summary(const proto::FaultReport& r, std::string_view indent) {
  std::string out;
  if (r.step_completed()) {
    out += fmt::format("step completed, {:.3f}x the healthy step ({})\n", r.slowdown(),
                       format_seconds(Seconds(r.healthy_step_time_s())));
  } else {
    out += fmt::format("STEP DID NOT COMPLETE: stopped at {}, {:.1f}% of its ops done (healthy step {})\n",
                       format_seconds(Seconds(r.stopped_at_s())), 100.0 * r.ops_done_fraction(),
                       format_seconds(Seconds(r.healthy_step_time_s())));
    out += fmt::format("{}because {}\n", indent, r.stop_reason());
    for (int i = 0; i < r.unfinished_size() && i < 5; ++i) out += fmt::format("{}  unfinished: {}\n", indent, r.unfinished(i));
    if (r.unfinished_size() > 5) out += fmt::format("{}  ... {} more in report.json\n", indent, r.unfinished_size() - 5);
  }
  for (const auto& f : r.injected()) {
    out += fmt::format("{}at {}: {}{}{}\n", indent, format_seconds(Seconds(f.at_s())), f.description(),
                       f.ranks().empty() ? "" : fmt::format(" (ranks {})", fmt::join(f.ranks(), ", ")),
                       f.struck() ? "" : ", after the step ended: no effect");
  }
  return out;
}

}  // namespace eppsim
