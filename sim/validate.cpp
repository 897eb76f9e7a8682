#include "sim/validate.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/index_list.h"
#include "traces/csv_export.h"
#include "base/proto_io.h"
#include "schedule/trace_events.h"
#include "schedule/trace_file.h"
#include "traces/op_event_join.h"
#include "traces/trace_stats.h"

namespace eppsim {
namespace {

std::optional<double> relative_error(double simulated, double measured) {
  if (measured > 0.0) return (simulated - measured) / measured;
  if (simulated == measured) return 0.0;
  return std::nullopt;
}

}  // namespace

proto::Validation validate_traces(const TraceParts& simulated_parts, const TraceParts& measured_parts,
                                  const std::function<void(const TimelineRow&)>& timeline_row) {
  const proto::Trace& simulated = simulated_parts.header();
  const proto::Trace& measured = measured_parts.header();
  const std::string& simulated_name = simulated_parts.name();
  const std::string& measured_name = measured_parts.name();
  const auto different = [&](const std::string& what) {
    return InputError(fmt::format("{} and {}: traces of different schedules: {}", simulated_name, measured_name, what));
  };
  if (simulated.num_ranks() != measured.num_ranks())
    throw different(fmt::format("num_ranks {} vs {}", simulated.num_ranks(), measured.num_ranks()));
  for (const auto* parts : {&simulated_parts, &measured_parts}) {
    const proto::Trace& trace = parts->header();
    if (trace.has_incomplete()) {
      throw InputError(fmt::format("{}: incomplete: the step did not complete ({}), so it has no step time to compare",
                                   parts->name(), trace.incomplete().reason()));
    }
    if (trace.step_time_ns() <= 0)
      throw InputError(fmt::format("{}: step_time_ns: must be > 0, got {}", parts->name(), trace.step_time_ns()));
  }
  require_same_ranks(simulated, simulated_name, measured, measured_name, "validate");
  const TraceTally sim_tally = tally_trace(simulated_parts);
  const TraceTally meas_tally = tally_trace(measured_parts);

  proto::Validation v;
  v.set_simulated_file(simulated_name);
  v.set_measured_file(measured_name);
  v.set_simulated_engine(simulated.engine());
  v.set_measured_engine(measured.engine());
  v.set_ranks(simulated.num_ranks());
  const double sim_step = static_cast<double>(simulated.step_time_ns()) * 1e-9;
  const double meas_step = static_cast<double>(measured.step_time_ns()) * 1e-9;
  v.set_simulated_step_time_s(sim_step);
  v.set_measured_step_time_s(meas_step);
  v.set_step_time_error((sim_step - meas_step) / meas_step);
  if (!measured.measured_step_times_ns().empty()) {
    const auto [fastest, slowest] = std::ranges::minmax(measured.measured_step_times_ns());
    v.set_measured_step_time_min_s(static_cast<double>(fastest) * 1e-9);
    v.set_measured_step_time_max_s(static_cast<double>(slowest) * 1e-9);
  }

  // A hybrid emulation: its virtual ranks are the simulation's on both sides.
  const auto& real_ranks = measured.real_ranks_size() > 0 ? measured.real_ranks() : simulated.real_ranks();
  *v.mutable_real_ranks() = real_ranks;
  const auto is_virtual = [&](std::uint32_t rank) {
    return !real_ranks.empty() && std::find(real_ranks.begin(), real_ranks.end(), rank) == real_ranks.end();
  };
  struct KindTotals {
    std::string label;
    std::uint32_t ops = 0;
    std::int64_t simulated_ns = 0, measured_ns = 0;
  };
  std::map<std::pair<int, int>, KindTotals> kinds;
  const auto stream_name = [&](std::uint32_t stream) {
    return stream < static_cast<std::uint32_t>(simulated.stream_names_size())
               ? simulated.stream_names(static_cast<int>(stream))
               : std::to_string(stream);
  };
  std::uint32_t ops = 0;
  const std::string difference = join_op_events(
      {simulated_parts, sim_tally, simulated_name}, {measured_parts, meas_tally, measured_name},
      [&](const OpEventFields& s, const OpEventFields& m) {
        ++ops;
        const std::string label = op_kind_label(s);
        if (timeline_row) {
          timeline_row({s.rank, s.op, stream_name(s.stream), label, s.start_ns - sim_tally.earliest_start_ns,
                        s.end_ns - sim_tally.earliest_start_ns, m.start_ns - meas_tally.earliest_start_ns,
                        m.end_ns - meas_tally.earliest_start_ns});
        }
        if (s.kind == proto::MEMORY || is_virtual(s.rank)) return;
        KindTotals& totals = kinds[op_kind_order(s)];
        totals.label = label;
        ++totals.ops;
        totals.simulated_ns += s.end_ns - s.start_ns;
        totals.measured_ns += m.end_ns - m.start_ns;
      });
  if (!difference.empty()) throw different(difference);
  v.set_ops(ops);
  for (const auto& [order, totals] : kinds) {
    auto* k = v.add_kinds();
    k->set_kind(totals.label);
    k->set_ops(totals.ops);
    k->set_simulated_s(static_cast<double>(totals.simulated_ns) * 1e-9);
    k->set_measured_s(static_cast<double>(totals.measured_ns) * 1e-9);
    if (const auto error = relative_error(k->simulated_s(), k->measured_s())) k->set_error(*error);
  }
  for (std::uint32_t r = 0; r < simulated.num_ranks(); ++r) {
    auto* rank = v.add_per_rank();
    rank->set_rank(r);
    rank->set_virtual_rank(is_virtual(r));
    const std::int64_t sim_busy = sim_tally.busy_ns[r], meas_busy = meas_tally.busy_ns[r];
    rank->set_simulated_busy_s(static_cast<double>(sim_busy) * 1e-9);
    rank->set_measured_busy_s(static_cast<double>(meas_busy) * 1e-9);
    rank->set_simulated_idle_s(static_cast<double>(std::max<std::int64_t>(0, simulated.step_time_ns() - sim_busy)) * 1e-9);
    rank->set_measured_idle_s(static_cast<double>(std::max<std::int64_t>(0, measured.step_time_ns() - meas_busy)) * 1e-9);
    if (const auto error = relative_error(rank->simulated_busy_s(), rank->measured_busy_s())) rank->set_busy_error(*error);
  }
  return v;
}

ValidationResult validate_traces(const proto::Trace& simulated, const proto::Trace& measured,
                                 std::string_view simulated_name, std::string_view measured_name) {
  ValidationResult result;
  result.validation = validate_traces(TraceInMemory(simulated, std::string(simulated_name)),
                                      TraceInMemory(measured, std::string(measured_name)),
                                      [&](const TimelineRow& row) { result.timeline.push_back(row); });
  return result;
}

namespace {

constexpr std::string_view kTimelineHeader =
    "rank,op,stream,kind,simulated_start_s,simulated_end_s,measured_start_s,measured_end_s\n";

void append_timeline_row(fmt::memory_buffer& out, const TimelineRow& row) {
  fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{}\n", row.rank, row.op, csv_field(row.stream),
                 csv_field(row.kind), csv_seconds(row.simulated_start_ns), csv_seconds(row.simulated_end_ns),
                 csv_seconds(row.measured_start_ns), csv_seconds(row.measured_end_ns));
}

}  // namespace

proto::Validation validate_trace_files(const std::filesystem::path& simulated, const std::filesystem::path& measured,
                                       const std::filesystem::path& dir) {
  // Each read a part at a time: what is held is an interval per event (the
  // tally) and the join's batch (traces/op_event_join.h); the timeline's rows
  // go to the file as the ops are matched.
  const TraceFile sim(simulated, kTraceTallyBytesPerTraceByte), meas(measured, kTraceTallyBytesPerTraceByte);
  AtomicFileWriter timeline(dir / "timeline.csv");
  fmt::memory_buffer out;
  out.append(kTimelineHeader);
  const proto::Validation validation = validate_traces(sim, meas, [&](const TimelineRow& row) {
    append_timeline_row(out, row);
    flush_if_full(out, timeline);
  });
  timeline.write(std::string_view(out.data(), out.size()));
  write_file_atomically(dir / "validation.json", to_json(validation));
  timeline.commit();
  return validation;
}

void write_validation(const ValidationResult& result, const std::filesystem::path& dir) {
  write_file_atomically(dir / "validation.json", to_json(result.validation));
  fmt::memory_buffer csv;
  csv.append(kTimelineHeader);
  for (const TimelineRow& row : result.timeline) append_timeline_row(csv, row);
  write_file_atomically(dir / "timeline.csv", std::string_view(csv.data(), csv.size()));
}

std::string validation_summary(const proto::Validation& v) {
  std::string out = fmt::format("  step time    simulated {:.6f} s, measured {:.6f} s, error {:+.2f}%\n",
                                v.simulated_step_time_s(), v.measured_step_time_s(), 100.0 * v.step_time_error());
  if (v.has_measured_step_time_min_s()) {
    out += fmt::format("  measured     the median step; the steps took {:.6f} to {:.6f} s\n", v.measured_step_time_min_s(),
                       v.measured_step_time_max_s());
  }
  const auto error_text = [](bool has, double error) {
    return has ? fmt::format("{:+.2f}%", 100.0 * error) : std::string("undefined");
  };
  if (!v.real_ranks().empty()) {
    out += fmt::format("  hybrid       ranks {} real, the other {} virtual; the kinds count the real ranks' ops\n",
                       format_index_list(std::vector<std::uint32_t>(v.real_ranks().begin(), v.real_ranks().end())),
                       v.ranks() - static_cast<std::uint32_t>(v.real_ranks_size()));
  }
  for (const auto& k : v.kinds()) {
    out += fmt::format("  {:<26} {:>6} ops  simulated {:.6f} s, measured {:.6f} s, error {}\n", k.kind(), k.ops(),
                       k.simulated_s(), k.measured_s(), error_text(k.has_error(), k.error()));
  }
  for (const auto& r : v.per_rank()) {
    if (v.real_ranks().empty() || r.virtual_rank()) continue;
    out += fmt::format("  {:<26}        busy simulated {:.6f} s, measured {:.6f} s, error {}\n",
                       fmt::format("rank {} (real)", r.rank()), r.simulated_busy_s(), r.measured_busy_s(),
                       error_text(r.has_busy_error(), r.busy_error()));
  }
  return out;
}

}  // namespace eppsim
