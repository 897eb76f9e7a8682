#include "sim/sweep/sweep_file.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include "base/index_list.h"
#include "base/errors.h"
#include "base/input_limits.h"
#include "base/proto_io.h"
#include "base/text_parse.h"
#include "scenario/scenario.h"
#include "traces/trace_report.h"

namespace eppsim {
namespace {

using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;
namespace fs = std::filesystem;

// The axis field whose values are base scenario files, not --set overrides.
constexpr std::string_view kScenarioField = "scenario";

// Where a field of the sweep file was written, for messages: "SWEEP:LINE".
class SweepLocator {
 public:
  SweepLocator(std::string source, const ParseInfoTree& tree) : source_(std::move(source)), tree_(tree) {}

  // The line of sweep field `name` (index `index` when repeated), inside the
  // message that `path` leads to: {("axes", 2), ("fields", 0)} is axes[2].fields[0].
  [[noreturn]] void fail(std::initializer_list<std::pair<std::string_view, int>> path, std::string_view field,
                         std::string_view rule) const {
    const ParseInfoTree* tree = &tree_;
    const google::protobuf::Descriptor* descriptor = proto::Sweep::descriptor();
    int line = -1;
    auto step = [&](std::string_view name, int index) -> bool {
      const auto* f = descriptor == nullptr ? nullptr : descriptor->FindFieldByName(std::string(name));
      if (f == nullptr || tree == nullptr) return false;
      const auto location = tree->GetLocation(f, f->is_repeated() ? std::max(index, 0) : -1);
      if (location.line >= 0) line = location.line;
      if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) return false;
      tree = tree->GetTreeForNested(f, f->is_repeated() ? std::max(index, 0) : -1);
      descriptor = f->message_type();
      return true;
    };
    std::string dotted;
    bool walking = true;
    for (const auto& [name, index] : path) {
      dotted += fmt::format("{}{}[{}]", dotted.empty() ? "" : ".", name, index);
      walking = walking && step(name, index);
    }
    if (!field.empty()) {
      dotted += fmt::format("{}{}", dotted.empty() ? "" : ".", field);
      if (walking) step(field, 0);
    }
    if (line >= 0) throw InputError(fmt::format("{}:{}: {}: {}", source_, line + 1, dotted, rule));
    throw InputError(fmt::format("{}: {}: {}", source_, dotted, rule));
  }

 private:
  std::string source_;
  const ParseInfoTree& tree_;
};

std::string number_text(double value) {
  if (std::floor(value) == value && std::abs(value) < 9007199254740992.0) return fmt::format("{:.0f}", value);
  return fmt::format("{}", value);
}

// `assignment` applied to a copy of `base`; the InputError's text, or "" when it applies.
std::string override_error(const proto::Scenario& base, const std::string& assignment) {
  proto::Scenario copy = base;
  try {
    apply_override(&copy, assignment);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// One axis's steps: each step's label (its value in results and filters) and
// its overrides; with sets_base, step i also picks base scenario i.
struct AxisSteps {
  std::vector<std::string> labels;
  std::vector<std::vector<std::string>> overrides;
  bool sets_base = false;
};

// Why `assignment` does not apply to every base scenario; "" when it does.
using OverrideCheck = std::function<std::string(const std::string& assignment)>;

void check_labels(const std::vector<std::string>& labels, int a, const SweepLocator& where, std::string_view field,
                  std::string_view rule) {
  if (std::set(labels.begin(), labels.end()).size() != labels.size()) where.fail({{"axes", a}}, field, rule);
}

// An axis of zipped fields: step i sets every field to its value i.
AxisSteps zipped_steps(const proto::SweepAxis& axis, int a, const SweepLocator& where, const OverrideCheck& check) {
  if (axis.fields_size() == 0) where.fail({{"axes", a}}, "fields", "an axis needs at least one field (or steps)");
  AxisSteps out;
  for (int f = 0; f < axis.fields_size(); ++f) {
    const proto::SweepField& field = axis.fields(f);
    if (field.field().empty()) where.fail({{"axes", a}, {"fields", f}}, "field", "is required: a field --set reaches");
    if (field.values_size() > 0 && field.has_range())
      where.fail({{"axes", a}, {"fields", f}}, "range", "give values or a range, not both");
    const bool scenario = field.field() == kScenarioField;  // its values are base scenarios, read already
    std::vector<std::string> list(field.values().begin(), field.values().end());
    if (field.has_range()) {
      try {
        list = range_values(field.range(), "range");
      } catch (const InputError& e) {
        where.fail({{"axes", a}, {"fields", f}}, "", e.what());
      }
    }
    if (list.empty()) where.fail({{"axes", a}, {"fields", f}}, "values", "an axis field needs values or a range");
    if (f > 0 && list.size() != out.overrides.size()) {
      where.fail({{"axes", a}, {"fields", f}}, "values",
                 fmt::format("zipped with {} ({} values), it has {}", axis.fields(0).field(), out.overrides.size(),
                             list.size()));
    }
    out.overrides.resize(list.size());
    for (std::size_t v = 0; v < list.size(); ++v) {
      if (f == 0) out.labels.push_back(scenario ? fs::path(list[v]).stem().string() : list[v]);
      if (scenario) continue;
      const std::string assignment = field.field() + "=" + list[v];
      if (const std::string error = check(assignment); !error.empty())
        where.fail({{"axes", a}, {"fields", f}}, field.has_range() ? "range" : "values", error);
      out.overrides[v].push_back(assignment);
    }
    out.sets_base = out.sets_base || scenario;
  }
  if (axis.labels_size() > 0) {
    if (static_cast<std::size_t>(axis.labels_size()) != out.labels.size())
      where.fail({{"axes", a}}, "labels", fmt::format("{} labels for {} steps", axis.labels_size(), out.labels.size()));
    out.labels.assign(axis.labels().begin(), axis.labels().end());
    check_labels(out.labels, a, where, "labels", "labels must be distinct");
  } else if (axis.fields(0).field() == kScenarioField) {
    check_labels(out.labels, a, where, "labels", "two scenario files of one name: label the steps");
  }
  return out;
}

// An axis of listed steps, each its own overrides.
AxisSteps listed_steps(const proto::SweepAxis& axis, int a, const SweepLocator& where, const OverrideCheck& check) {
  if (axis.fields_size() > 0 || axis.labels_size() > 0)
    where.fail({{"axes", a}}, "steps", "give fields (with labels) or steps, not both");
  AxisSteps out;
  for (int i = 0; i < axis.steps_size(); ++i) {
    const proto::SweepStep& step = axis.steps(i);
    if (step.label().empty()) where.fail({{"axes", a}, {"steps", i}}, "label", "is required: the step's name");
    out.labels.push_back(step.label());
    out.overrides.emplace_back();
    for (int k = 0; k < step.set_size(); ++k) {
      if (const std::string error = check(step.set(k)); !error.empty())
        where.fail({{"axes", a}, {"steps", i}}, "set", error);
      out.overrides.back().push_back(step.set(k));
    }
  }
  check_labels(out.labels, a, where, "steps", "step labels must be distinct");
  return out;
}

}  // namespace

std::vector<std::string> range_values(const proto::SweepRange& range, const std::string& where) {
  const double start = range.start(), stop = range.stop(), step = range.step(), factor = range.factor();
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step) || !std::isfinite(factor))
    throw InputError(fmt::format("{}: start, stop, step and factor must be finite", where));
  if ((step != 0.0) == (factor != 0.0))
    throw InputError(fmt::format("{}: give exactly one of step (> 0) and factor (> 1)", where));
  if (step < 0.0 || (factor != 0.0 && factor <= 1.0))
    throw InputError(fmt::format("{}: step must be > 0 and factor > 1, got step {} factor {}", where, step, factor));
  if (start > stop) throw InputError(fmt::format("{}: start {} is past stop {}", where, start, stop));
  if (factor != 0.0 && start <= 0.0)
    throw InputError(fmt::format("{}: a range with a factor must start above 0, got {}", where, start));
  std::vector<std::string> values;
  for (std::uint64_t i = 0;; ++i) {
    const double value = step != 0.0 ? start + static_cast<double>(i) * step : start * std::pow(factor, static_cast<double>(i));
    if (value > stop * (1.0 + 1e-12)) break;
    if (values.size() >= limits::kMaxSweepPoints)
      throw InputError(fmt::format("{}: more than {} values", where, limits::kMaxSweepPoints));
    values.push_back(number_text(value));
  }
  return values;
}

std::string point_key(const proto::Scenario& effective) {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a 64
  auto mix = [&](std::string_view bytes) {
    for (const char c : bytes) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ull;
    }
  };
  mix(eppsim_version());
  mix("\n");
  mix(to_text(effective));
  return fmt::format("{:016x}", hash);
}

SweepPlan read_sweep(const std::filesystem::path& file) {
  SweepPlan plan;
  plan.file = file;
  const std::string source = file.string();
  ParseInfoTree tree;
  parse_text_strict(read_file(file, limits::kMaxSweepFileBytes), &plan.sweep, source, &tree);
  const SweepLocator where(source, tree);
  const proto::Sweep& sweep = plan.sweep;
  if (!sweep.command().empty() && sweep.command() != "run" && sweep.command() != "topo")
    where.fail({}, "command", fmt::format("'{}' is neither \"run\" nor \"topo\"", sweep.command()));

  // The base scenarios: the sweep's `scenario`, or the values of its `scenario` axis field.
  std::optional<std::pair<int, int>> scenario_field;  // (axis, field)
  for (int a = 0; a < sweep.axes_size(); ++a) {
    for (int f = 0; f < sweep.axes(a).fields_size(); ++f) {
      if (sweep.axes(a).fields(f).field() != kScenarioField) continue;
      if (scenario_field) where.fail({{"axes", a}, {"fields", f}}, "field", "a second axis field `scenario`");
      if (!sweep.scenario().empty())
        where.fail({{"axes", a}, {"fields", f}}, "field",
                   "the sweep's `scenario` is set: give the base scenario there or as an axis, not both");
      if (sweep.axes(a).fields(f).has_range())
        where.fail({{"axes", a}, {"fields", f}}, "range", "`scenario` takes values: scenario files");
      scenario_field = {a, f};
    }
  }
  const auto read_base = [&](const std::string& name, std::initializer_list<std::pair<std::string_view, int>> path,
                             std::string_view field) {
    SweepBase base;
    base.file = (file.parent_path() / name).lexically_normal();  // "studies/x/../../y.textproto" as "y.textproto"
    try {
      base.scenario = parse_scenario_file(base.file).proto;
    } catch (const InputError& e) {
      where.fail(path, field, e.what());
    }
    plan.bases.push_back(std::move(base));
  };
  if (scenario_field) {
    const auto [a, f] = *scenario_field;
    for (const std::string& name : sweep.axes(a).fields(f).values()) read_base(name, {{"axes", a}, {"fields", f}}, "values");
  } else if (sweep.scenario().empty()) {
    where.fail({}, "scenario", "is required: the base scenario, relative to this file (or an axis of `scenario` files)");
  } else {
    read_base(sweep.scenario(), {}, "scenario");
  }
  // Each base with the sweep's `set`, against which the axes' values are checked.
  std::vector<proto::Scenario> checked;
  for (const SweepBase& base : plan.bases) checked.push_back(base.scenario);
  const auto check_override = [&](const std::string& assignment) -> std::string {
    for (std::size_t b = 0; b < checked.size(); ++b) {
      if (std::string error = override_error(checked[b], assignment); !error.empty())
        return plan.bases.size() > 1 ? fmt::format("{} (base scenario {})", error, plan.bases[b].file.string()) : error;
    }
    return "";
  };
  for (int i = 0; i < sweep.set_size(); ++i) {
    if (const std::string error = check_override(sweep.set(i)); !error.empty()) where.fail({{"set", i}}, "", error);
    for (proto::Scenario& scenario : checked) apply_override(&scenario, sweep.set(i));
  }

  // Each axis's steps: a label and overrides each, checked against the base scenarios.
  std::vector<AxisSteps> axes;
  std::uint64_t grid = 1;
  std::set<std::string> names;
  for (int a = 0; a < sweep.axes_size(); ++a) {
    const proto::SweepAxis& axis = sweep.axes(a);
    AxisSteps steps = axis.steps_size() > 0 ? listed_steps(axis, a, where, check_override)
                                            : zipped_steps(axis, a, where, check_override);
    if (axis.name().empty() && axis.fields_size() == 0) where.fail({{"axes", a}}, "name", "an axis of steps needs a name");
    const std::string name = axis.name().empty() ? axis.fields(0).field() : axis.name();
    if (!names.insert(name).second) where.fail({{"axes", a}}, "name", fmt::format("a second axis named '{}'", name));
    plan.axes.push_back(name);
    grid *= steps.labels.size();
    if (grid > limits::kMaxSweepPoints)
      where.fail({{"axes", a}}, "", fmt::format("the grid has more than {} points", limits::kMaxSweepPoints));
    axes.push_back(std::move(steps));
  }
  for (int s = 0; s < sweep.skip_size(); ++s) {
    for (int c = 0; c < sweep.skip(s).when_size(); ++c) {
      if (!names.contains(sweep.skip(s).when(c).axis()))
        where.fail({{"skip", s}, {"when", c}}, "axis",
                   fmt::format("no axis is named '{}' (axes: {})", sweep.skip(s).when(c).axis(), fmt::join(plan.axes, ", ")));
    }
  }

  // The grid, first axis slowest, without the skipped points.
  std::vector<std::size_t> step(axes.size(), 0);
  for (std::uint64_t n = 0; n < grid; ++n) {
    std::uint64_t rest = n;
    for (std::size_t a = axes.size(); a-- > 0;) {
      step[a] = rest % axes[a].labels.size();
      rest /= axes[a].labels.size();
    }
    SweepPointSpec point;
    point.overrides.assign(sweep.set().begin(), sweep.set().end());
    for (std::size_t a = 0; a < axes.size(); ++a) {
      point.values.push_back(axes[a].labels[step[a]]);
      if (axes[a].sets_base) point.base = step[a];
      const auto& overrides = axes[a].overrides[step[a]];
      point.overrides.insert(point.overrides.end(), overrides.begin(), overrides.end());
    }
    bool skipped = false;
    for (const proto::SweepFilter& filter : sweep.skip()) {
      bool all = filter.when_size() > 0;
      for (const proto::SweepCondition& condition : filter.when()) {
        const auto axis = static_cast<std::size_t>(std::find(plan.axes.begin(), plan.axes.end(), condition.axis()) -
                                                   plan.axes.begin());
        all = all && std::find(condition.values().begin(), condition.values().end(), point.values[axis]) !=
                         condition.values().end();
      }
      skipped = skipped || all;
    }
    if (skipped) continue;
    point.index = static_cast<std::uint32_t>(plan.points.size());
    plan.points.push_back(std::move(point));
  }
  return plan;
}

}  // namespace eppsim

namespace eppsim {

void select_points(SweepPlan* plan, const std::string& list) {
  const auto points = parse_index_list(list, static_cast<std::uint32_t>(plan->points.size()), "--points", "point");
  const std::set<std::uint32_t> wanted(points.begin(), points.end());
  std::erase_if(plan->points, [&](const SweepPointSpec& point) { return !wanted.contains(point.index); });
}

}  // namespace eppsim
