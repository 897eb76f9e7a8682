#include "sim/validate.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "models/errors.h"
#include "traces/csv_export.h"
#include "traces/op_names.h"
#include "traces/proto_io.h"

namespace eppsim {
namespace {

using Key = std::pair<std::uint32_t, std::uint32_t>;  // (rank, op index)

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The events of a trace by (rank, op); duplicates are an InputError.
std::map<Key, const proto::OpEvent*> events_by_op(const proto::Trace& trace, std::string_view name) {
  std::map<Key, const proto::OpEvent*> events;
  for (const proto::OpEvent& e : trace.events()) {
    if (e.rank() >= trace.num_ranks()) {
      throw InputError(fmt::format("{}: events: rank {} op {} is outside the trace's {} ranks", name, e.rank(), e.op(),
                                   trace.num_ranks()));
    }
    if (!events.emplace(Key{e.rank(), e.op()}, &e).second)
      throw InputError(fmt::format("{}: events: rank {} op {} appears twice", name, e.rank(), e.op()));
  }
  return events;
}

// The first field in which two events of the same op differ, as "field a vs b"; empty when none.
std::string difference(const proto::OpEvent& a, const proto::OpEvent& b) {
  const std::tuple<std::string_view, std::uint64_t, std::uint64_t> fields[] = {
      {"kind", a.kind(), b.kind()},         {"phase", a.phase(), b.phase()},
      {"collective", a.collective(), b.collective()}, {"peer", a.peer(), b.peer()},
      {"group", a.group(), b.group()},      {"size_bytes", a.size_bytes(), b.size_bytes()},
  };
  for (const auto& [field, x, y] : fields) {
    if (x != y) return fmt::format("{} {} vs {}", field, x, y);
  }
  return {};
}

std::optional<double> relative_error(double simulated, double measured) {
  if (measured > 0.0) return (simulated - measured) / measured;
  if (simulated == measured) return 0.0;
  return std::nullopt;
}

std::int64_t earliest_start(const proto::Trace& trace) {
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  for (const auto& e : trace.events()) earliest = std::min(earliest, e.start_ns());
  return trace.events().empty() ? 0 : earliest;
}

// Total length of the union of [start, end) intervals.
std::int64_t union_ns(std::vector<std::pair<std::int64_t, std::int64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  std::int64_t total = 0, covered_to = std::numeric_limits<std::int64_t>::min();
  for (const auto& [start, end] : spans) {
    const std::int64_t from = std::max(start, covered_to);
    if (end > from) total += end - from;
    covered_to = std::max(covered_to, end);
  }
  return total;
}

// (kind, phase or collective) orders the kinds: compute by phase, send, recv, collectives.
std::pair<int, int> kind_order(const proto::OpEvent& e) {
  return {static_cast<int>(e.kind()), e.kind() == proto::COMPUTE ? static_cast<int>(e.phase())
                                                                : static_cast<int>(e.collective())};
}

// Nanoseconds as seconds with 9 decimals, exactly.
std::string seconds(std::int64_t ns) {
  const bool negative = ns < 0;
  const std::uint64_t magnitude =
      negative ? std::uint64_t{0} - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  return fmt::format("{}{}.{:09}", negative ? "-" : "", magnitude / 1000000000, magnitude % 1000000000);
}

}  // namespace

std::string op_kind_label(const proto::OpEvent& e) {
  switch (e.kind()) {
    case proto::COMPUTE:
      return e.phase() == proto::PHASE_UNSPECIFIED ? "compute" : "compute/" + lower(proto::Phase_Name(e.phase()));
    case proto::SEND: return "send";
    case proto::RECV: return "recv";
    case proto::COLLECTIVE: return fmt::format("collective/{}", collective_kind_name(e.collective()));
    case proto::MEMORY: return "memory";
    default: break;
  }
  return fmt::format("kind {}", static_cast<int>(e.kind()));
}

ValidationResult validate_traces(const proto::Trace& simulated, const proto::Trace& measured,
                                 std::string_view simulated_name, std::string_view measured_name) {
  const auto different = [&](const std::string& what) {
    return InputError(fmt::format("{} and {}: traces of different schedules: {}", simulated_name, measured_name, what));
  };
  if (simulated.num_ranks() != measured.num_ranks())
    throw different(fmt::format("num_ranks {} vs {}", simulated.num_ranks(), measured.num_ranks()));
  for (const auto& [trace, name] : {std::pair{&simulated, simulated_name}, std::pair{&measured, measured_name}}) {
    if (trace->step_time_ns() <= 0)
      throw InputError(fmt::format("{}: step_time_ns: must be > 0, got {}", name, trace->step_time_ns()));
  }
  const auto sim_events = events_by_op(simulated, simulated_name);
  const auto meas_events = events_by_op(measured, measured_name);
  for (const auto& [key, e] : sim_events) {
    if (!meas_events.contains(key))
      throw different(fmt::format("rank {} op {} is in {} only", key.first, key.second, simulated_name));
  }
  for (const auto& [key, e] : meas_events) {
    const auto it = sim_events.find(key);
    if (it == sim_events.end())
      throw different(fmt::format("rank {} op {} is in {} only", key.first, key.second, measured_name));
    const std::string diff = difference(*it->second, *e);
    if (!diff.empty()) throw different(fmt::format("rank {} op {}: {}", key.first, key.second, diff));
  }

  ValidationResult result;
  proto::Validation& v = result.validation;
  v.set_simulated_file(std::string(simulated_name));
  v.set_measured_file(std::string(measured_name));
  v.set_simulated_engine(simulated.engine());
  v.set_measured_engine(measured.engine());
  v.set_ranks(simulated.num_ranks());
  v.set_ops(static_cast<std::uint32_t>(sim_events.size()));
  const double sim_step = static_cast<double>(simulated.step_time_ns()) * 1e-9;
  const double meas_step = static_cast<double>(measured.step_time_ns()) * 1e-9;
  v.set_simulated_step_time_s(sim_step);
  v.set_measured_step_time_s(meas_step);
  v.set_step_time_error((sim_step - meas_step) / meas_step);

  const std::int64_t sim_origin = earliest_start(simulated);
  const std::int64_t meas_origin = earliest_start(measured);
  struct KindTotals {
    std::string label;
    std::uint32_t ops = 0;
    std::int64_t simulated_ns = 0, measured_ns = 0;
  };
  std::map<std::pair<int, int>, KindTotals> kinds;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> sim_spans(simulated.num_ranks()),
      meas_spans(simulated.num_ranks());
  const auto stream_name = [](const proto::Trace& trace, std::uint32_t stream) {
    return stream < static_cast<std::uint32_t>(trace.stream_names_size()) ? trace.stream_names(static_cast<int>(stream))
                                                                          : std::to_string(stream);
  };
  for (const auto& [key, s] : sim_events) {
    const proto::OpEvent& m = *meas_events.at(key);
    const std::string label = op_kind_label(*s);
    result.timeline.push_back({key.first, key.second, stream_name(simulated, s->stream()), label,
                               s->start_ns() - sim_origin, s->end_ns() - sim_origin, m.start_ns() - meas_origin,
                               m.end_ns() - meas_origin});
    if (s->kind() == proto::MEMORY) continue;
    KindTotals& totals = kinds[kind_order(*s)];
    totals.label = label;
    ++totals.ops;
    totals.simulated_ns += s->end_ns() - s->start_ns();
    totals.measured_ns += m.end_ns() - m.start_ns();
    sim_spans[key.first].emplace_back(s->start_ns(), s->end_ns());
    meas_spans[key.first].emplace_back(m.start_ns(), m.end_ns());
  }
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
    const std::int64_t sim_busy = union_ns(std::move(sim_spans[r]));
    const std::int64_t meas_busy = union_ns(std::move(meas_spans[r]));
    rank->set_simulated_busy_s(static_cast<double>(sim_busy) * 1e-9);
    rank->set_measured_busy_s(static_cast<double>(meas_busy) * 1e-9);
    rank->set_simulated_idle_s(static_cast<double>(std::max<std::int64_t>(0, simulated.step_time_ns() - sim_busy)) * 1e-9);
    rank->set_measured_idle_s(static_cast<double>(std::max<std::int64_t>(0, measured.step_time_ns() - meas_busy)) * 1e-9);
    if (const auto error = relative_error(rank->simulated_busy_s(), rank->measured_busy_s())) rank->set_busy_error(*error);
  }
  return result;
}

ValidationResult validate_trace_files(const std::filesystem::path& simulated, const std::filesystem::path& measured) {
  proto::Trace sim, meas;
  read_message(simulated, &sim);
  read_message(measured, &meas);
  return validate_traces(sim, meas, simulated.string(), measured.string());
}

void write_validation(const ValidationResult& result, const std::filesystem::path& dir) {
  write_file_atomically(dir / "validation.json", to_json(result.validation));
  std::string csv = "rank,op,stream,kind,simulated_start_s,simulated_end_s,measured_start_s,measured_end_s\n";
  for (const TimelineRow& row : result.timeline) {
    csv += fmt::format("{},{},{},{},{},{},{},{}\n", row.rank, row.op, csv_field(row.stream), csv_field(row.kind),
                       seconds(row.simulated_start_ns), seconds(row.simulated_end_ns), seconds(row.measured_start_ns),
                       seconds(row.measured_end_ns));
  }
  write_file_atomically(dir / "timeline.csv", csv);
}

std::string validation_summary(const proto::Validation& v) {
  std::string out = fmt::format("  step time    simulated {:.6f} s, measured {:.6f} s, error {:+.2f}%\n",
                                v.simulated_step_time_s(), v.measured_step_time_s(), 100.0 * v.step_time_error());
  for (const auto& k : v.kinds()) {
    out += fmt::format("  {:<26} {:>6} ops  simulated {:.6f} s, measured {:.6f} s, error {}\n", k.kind(), k.ops(),
                       k.simulated_s(), k.measured_s(),
                       k.has_error() ? fmt::format("{:+.2f}%", 100.0 * k.error()) : std::string("undefined"));
  }
  return out;
}

}  // namespace eppsim
