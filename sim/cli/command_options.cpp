#include "sim/cli/command_options.h"

#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"
#include "base/log.h"
#include "base/memory_limit.h"
#include "base/units.h"
#include "base/utf8.h"
#include "sim/compare.h"
#include "sim/engine/engine_registry.h"

namespace eppsim {

namespace fs = std::filesystem;

void add_output_option(po::options_description& options) {
  options.add_options()("output,o", po::value<std::string>()->default_value("eppsim-out"), "output directory");
}

void add_outputs_option(po::options_description& options) {
  options.add_options()("outputs", po::value<std::string>()->default_value("all"),
                        "heavy files to write: all, none, or a list of trace (trace.pb), chrome (trace.json), csv "
                        "(ops.csv, memory.csv), schedule (schedule.pb); report, timings, scenario and ranks.csv "
                        "are always written");
}

void add_trace_ranks_option(po::options_description& options) {
  options.add_options()(
      "trace-ranks", po::value<std::string>(),
      fmt::format("whose op events trace.pb, trace.json and the CSV files hold: all, auto (one rank of each pipeline "
                  "stage and group size, the slowest rank, the ranks faults strike) or a list of ranks (0,3,7-9); "
                  "default all up to {} ops, auto past it; the report covers every rank either way",
                  kMaxDefaultTracedOps)
          .c_str());
}

void add_html_option(po::options_description& options) {
  options.add_options()("html", po::bool_switch(),
                        "also write DIR/report.html: summary, plots and links to the trace files in one page "
                        "(runs plots/report.py with /usr/bin/python3; EPPSIM_PLOTS_DIR overrides where plots/ is)");
}

void add_common_options(po::options_description& options) {
  options.add_options()("log", po::value<std::string>(),
                        "log levels on stderr: CATEGORY:LEVEL or LEVEL, comma-separated, e.g. "
                        "plan.flexsp:debug,engine:warn (levels error, warn, info, debug; default info)")(
      "max-memory", po::value<std::string>(),
      fmt::format("the most memory a run may take, e.g. 16GiB: past it eppsim refuses the plan, simulation or file "
                  "that would need more (exit 2) rather than be killed (default: 85% of the machine's memory, at most "
                  "90% of the address-space limit; here {})",
                  format_bytes(Bytes(default_memory_limit_bytes())))
          .c_str())("help,h", "show this help");
}

void apply_common_options(const po::variables_map& vars) {
  logging::configure(vars.count("log") ? vars["log"].as<std::string>() : std::string());
  if (vars.count("max-memory")) set_memory_limit_from_option("", vars["max-memory"].as<std::string>());
}

RunOutputs outputs_from(const po::variables_map& vars) {
  RunOutputs outputs = parse_run_outputs(vars["outputs"].as<std::string>());
  if (vars.count("trace-ranks")) outputs.trace_ranks = parse_trace_ranks(vars["trace-ranks"].as<std::string>());
  return outputs;
}

void add_scenario_option(po::options_description& options) {
  options.add_options()("scenario", po::value<std::string>()->required(), "scenario file (.textproto)");
}

void add_engine_option(po::options_description& options) {
  options.add_options()("engine", po::value<std::string>(),
                        fmt::format("simulation engine: {} (overrides simulation.engine)", fmt::join(engine_names(), ", "))
                            .c_str());
}

void add_set_option(po::options_description& options, std::string_view example) {
  options.add_options()("set", po::value<std::vector<std::string>>()->composing(),
                        fmt::format("override a scenario field, e.g. --set {} (repeatable)", example).c_str());
}

void add_strategies_option(po::options_description& options, const std::string& default_list) {
  options.add_options()("strategies", po::value<std::string>(),
                        fmt::format("comma-separated strategies to compare, in order (default {})", default_list).c_str());
}

void add_scenario_options(po::options_description& options) {
  options.add_options()("strategy", po::value<std::string>(), "planner to use (overrides plan.strategy)");
  add_engine_option(options);
  add_set_option(options, "plan.packed_1f1b.pipeline_stages=8");
}

std::vector<std::string> overrides_from(const po::variables_map& vars) {
  std::vector<std::string> overrides;
  // An empty name in a scenario means the default; on the command line it is a
  // slip (an unset shell variable), not a request for the default.
  for (const auto& [option, field] : {std::pair{"strategy", "plan.strategy"}, std::pair{"engine", "simulation.engine"}}) {
    if (!vars.count(option)) continue;
    const auto& name = vars[option].as<std::string>();
    if (name.empty()) throw InputError(fmt::format("--{}: must not be empty (it overrides {})", option, field));
    overrides.push_back(fmt::format("{}={}", field, name));
  }
  if (vars.count("set")) {
    for (const auto& s : vars["set"].as<std::vector<std::string>>()) overrides.push_back(s);
  }
  return overrides;
}

std::vector<std::string> strategies_from(const po::variables_map& vars, std::vector<std::string> fallback) {
  return vars.count("strategies") ? parse_strategy_list(vars["strategies"].as<std::string>()) : fallback;
}

std::optional<fs::path> comm_groups_from(const po::variables_map& vars) {
  if (!vars.count("comm-groups")) return std::nullopt;
  return fs::path(vars["comm-groups"].as<std::string>());
}

void add_comm_groups_option(po::options_description& options) {
  options.add_options()("comm-groups", po::value<std::string>(),
                        "a Chakra prefix's communicator-group file (ASTRA-sim's JSON; default PREFIX.comm_groups.json "
                        "when it exists)");
}

fs::path output_directory_of(const po::variables_map& vars) {
  const fs::path out = vars["output"].as<std::string>();
  std::error_code error;
  const auto status = fs::status(out, error);
  if (fs::exists(status) && !fs::is_directory(status)) {
    throw InputError(fmt::format("{}: exists and is not a directory; this command writes its files into a directory "
                                 "(give a new or existing directory)",
                                 out.string()));
  }
  return out;
}

namespace {

// `text` with every byte outside printable ASCII as \xNN, for messages.
std::string escaped(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) out += ch;
    else out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

}  // namespace

// Every argument must be UTF-8: paths and names end up in eppsim's own
// outputs (JSON, protobuf strings), which could not be read back otherwise.
void require_utf8_arguments(std::string_view command, const po::variables_map& vars) {
  for (const auto& [name, value] : vars) {
    std::vector<std::string> texts;
    if (const auto* one = boost::any_cast<std::string>(&value.value())) texts.push_back(*one);
    if (const auto* many = boost::any_cast<std::vector<std::string>>(&value.value())) texts = *many;
    for (const auto& text : texts) {
      if (!is_utf8(text)) {
        throw InputError(fmt::format("{}: --{}: '{}' is not valid UTF-8 (eppsim writes names and paths into its "
                                     "outputs, which must be UTF-8 to be read back)",
                                     command.empty() ? "(no command)" : command, name, escaped(text)));
      }
    }
  }
}

// --name for each option of `options`, for error messages.
std::string option_names(const po::options_description& options) {
  std::vector<std::string> names;
  for (const auto& option : options.options()) names.push_back("--" + option->long_name());
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string unexpected_argument_message(std::string_view name, const std::vector<std::string>& positionals,
                                        const std::vector<std::string>& args, const po::options_description& options,
                                        std::string_view title) {
  const auto parsed = po::command_line_parser(args).options(options).allow_unregistered().run();
  const auto plain = po::collect_unrecognized(parsed.options, po::include_positional);
  const std::string extra = plain.size() > positionals.size() ? plain[positionals.size()] : "";
  const std::string takes = positionals.empty() ? "no positional argument"
                                                : fmt::format("{} positional argument{} ({})", positionals.size(),
                                                              positionals.size() == 1 ? "" : "s", fmt::join(positionals, ", "));
  return fmt::format("{}: unexpected argument '{}': it takes {}; see {} --help", name, extra, takes, title);
}

}  // namespace eppsim
