// eppsim: plan, simulate and report long-context training schedules.
// Only this file turns errors into exit codes: 0 success, 2 bad input, 1 other.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/errors.h"
#include "models/gpu_spec.h"
#include "models/transformer_spec.h"
#include "sim/compare.h"
#include "sim/plan/planner.h"
#include "sim/run.h"
#include "sim/topo.h"
#include "traces/chrome_trace.h"
#include "traces/proto_io.h"
#include "traces/scenario.h"
#include "traces/trace_report.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace eppsim {
namespace {

constexpr const char* kUsage = R"(usage: eppsim [COMMAND] [OPTIONS]

Plans, simulates and reports training schedules of variable-length long-context LLM training.

commands:
  (none)                       run the embedded quickstart scenario into ./eppsim-out/
  run SCENARIO [-o DIR]        plan and simulate a scenario; write report, trace, CSV
  compare SCENARIO [--strategies a,b,...] [-o DIR]
                               every strategy (default all) on the same sampled batch and
                               cluster; a table, DIR/compare.json, DIR/compare.csv and
                               DIR/STRATEGY/ run files
  topo SCENARIO [-o DIR]       build the cluster's topology (and cluster.compare_topologies);
                               report metrics and cost in DIR/topology.json
  plan SCENARIO -o SCHEDULE    write the planned Schedule (.pb, .json or .textproto)
  sim SCHEDULE --cluster SCENARIO [-o DIR]
                               simulate a Schedule on a scenario's cluster
  export chrome TRACE -o FILE.json
                               convert a trace.pb to Chrome trace JSON (Perfetto)
  presets                      list the built-in GPU and model presets, and the strategies

`eppsim COMMAND --help` describes a command's options. Exit status: 0 success,
2 bad input, 1 any other failure.
)";

// Parses `args` against `options` plus the named positional arguments, in
// order. Returns nothing after printing the help when --help was asked for.
std::optional<po::variables_map> parse(const std::vector<std::string>& args, po::options_description& options,
                                       const std::vector<std::string>& positionals, std::string_view preamble = {}) {
  options.add_options()("help,h", "show this help");
  po::positional_options_description positional;
  for (const auto& name : positionals) positional.add(name.c_str(), 1);
  po::variables_map vars;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vars);
  if (vars.count("help")) {
    std::cout << preamble << options;
    return std::nullopt;
  }
  po::notify(vars);
  return vars;
}

void add_scenario_options(po::options_description& options) {
  options.add_options()
      ("strategy", po::value<std::string>(), "planner to use (overrides plan.strategy)")
      ("engine", po::value<std::string>(), "simulation engine: analytic (overrides simulation.engine)")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "override a scenario field, e.g. --set plan.packed_1f1b.pipeline_stages=8 (repeatable)");
}

std::vector<std::string> overrides_from(const po::variables_map& vars) {
  std::vector<std::string> overrides;
  if (vars.count("strategy")) overrides.push_back("plan.strategy=" + vars["strategy"].as<std::string>());
  if (vars.count("engine")) overrides.push_back("simulation.engine=" + vars["engine"].as<std::string>());
  if (vars.count("set")) {
    for (const auto& s : vars["set"].as<std::vector<std::string>>()) overrides.push_back(s);
  }
  return overrides;
}

int finish_run(const RunResult& result, const fs::path& out) {
  write_run_directory(result, out);
  std::cout << human_summary(result);
  std::cout << fmt::format("  wrote        {}/{{report.json, trace.pb, trace.json, ops.csv, memory.csv, ranks.csv, schedule.pb}}\n",
                           out.string());
  return 0;
}

int command_quickstart(const std::vector<std::string>& args) {
  po::options_description options("eppsim (no command): run the embedded quickstart scenario");
  options.add_options()("output,o", po::value<std::string>()->default_value("eppsim-out"), "output directory");
  add_scenario_options(options);
  const auto parsed = parse(args, options, {}, std::string(kUsage) + "\n");
  if (!parsed) return 0;
  const auto scenario = load_embedded_quickstart(overrides_from(*parsed));
  return finish_run(run_scenario(scenario), (*parsed)["output"].as<std::string>());
}

int command_run(const std::vector<std::string>& args) {
  po::options_description options("eppsim run SCENARIO [-o DIR]: plan and simulate a scenario");
  options.add_options()
      ("scenario", po::value<std::string>()->required(), "scenario file (.textproto)")
      ("output,o", po::value<std::string>()->default_value("eppsim-out"), "output directory");
  add_scenario_options(options);
  const auto parsed = parse(args, options, {"scenario"});
  if (!parsed) return 0;
  const auto scenario = load_scenario((*parsed)["scenario"].as<std::string>(), overrides_from(*parsed));
  return finish_run(run_scenario(scenario), (*parsed)["output"].as<std::string>());
}

int command_topo(const std::vector<std::string>& args) {
  po::options_description options("eppsim topo SCENARIO [-o DIR]: network metrics and cost into DIR/topology.json");
  options.add_options()
      ("scenario", po::value<std::string>()->required(), "scenario file (.textproto)")
      ("output,o", po::value<std::string>()->default_value("eppsim-out"), "output directory")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "override a scenario field, e.g. --set cluster.prices.optical_switch_port_usd=300 (repeatable)");
  const auto parsed = parse(args, options, {"scenario"});
  if (!parsed) return 0;
  const auto scenario =
      load_scenario((*parsed)["scenario"].as<std::string>(), overrides_from(*parsed), ScenarioPart::Cluster);
  const fs::path out = (*parsed)["output"].as<std::string>();
  const auto report = run_topology_study(scenario);
  write_topology_report(report, out);
  std::cout << topology_summary(report);
  std::cout << fmt::format("  wrote        {}/topology.json\n", out.string());
  return 0;
}

int command_compare(const std::vector<std::string>& args) {
  po::options_description options(
      "eppsim compare SCENARIO [--strategies a,b,...] [-o DIR]: every strategy on the same batch and cluster");
  options.add_options()
      ("scenario", po::value<std::string>()->required(), "scenario file (.textproto)")
      ("strategies", po::value<std::string>(),
       fmt::format("comma-separated strategies to compare, in order (default all: {})", fmt::join(planner_names(), ",")).c_str())
      ("output,o", po::value<std::string>()->default_value("eppsim-out"), "output directory")
      ("engine", po::value<std::string>(), "simulation engine: analytic (overrides simulation.engine)")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "override a scenario field, e.g. --set workload.global_batch=64 (repeatable)");
  const auto parsed = parse(args, options, {"scenario"});
  if (!parsed) return 0;
  const auto strategies = parsed->count("strategies") ? parse_strategy_list((*parsed)["strategies"].as<std::string>())
                                                      : planner_names();
  const auto scenario = load_scenario((*parsed)["scenario"].as<std::string>(), overrides_from(*parsed));
  const fs::path out = (*parsed)["output"].as<std::string>();
  const auto result = compare_strategies(scenario, strategies);
  const auto& comparison = result.comparison;
  if (comparison.records_size() == 0) {
    std::string reasons;
    for (const auto& f : comparison.failures()) reasons += fmt::format("\n  {}: {}", f.strategy(), f.message());
    throw InputError(fmt::format("compare: no strategy could run {}:{}", scenario.source, reasons));
  }
  for (const auto& f : comparison.failures()) {
    std::cerr << fmt::format("eppsim compare: {} failed: {}\n", f.strategy(), f.message());
  }
  write_comparison_directory(result, out);
  std::cout << comparison_summary(comparison);
  std::cerr << fmt::format("wrote {}/{{compare.json, compare.csv}} and a run directory per strategy\n", out.string());
  return 0;
}

int command_plan(const std::vector<std::string>& args) {
  po::options_description options("eppsim plan SCENARIO -o SCHEDULE: write the planned Schedule");
  options.add_options()
      ("scenario", po::value<std::string>()->required(), "scenario file (.textproto)")
      ("output,o", po::value<std::string>()->required(), "schedule file: .pb, .json or .textproto");
  add_scenario_options(options);
  const auto parsed = parse(args, options, {"scenario"});
  if (!parsed) return 0;
  const auto scenario = load_scenario((*parsed)["scenario"].as<std::string>(), overrides_from(*parsed));
  const fs::path out = (*parsed)["output"].as<std::string>();
  const auto format = proto_format_for(out);
  const auto planned = plan_scenario(scenario);
  write_message(planned.schedule, out, format);
  std::cerr << fmt::format("planned {} ranks with {} in {:.3f} s; wrote {}\n", planned.schedule.num_ranks(),
                           planned.schedule.strategy(), planned.plan_time_s, out.string());
  return 0;
}

int command_sim(const std::vector<std::string>& args) {
  po::options_description options("eppsim sim SCHEDULE --cluster SCENARIO [-o DIR]: simulate a Schedule");
  options.add_options()
      ("schedule", po::value<std::string>()->required(), "schedule file (.pb, .json or .textproto)")
      ("cluster", po::value<std::string>()->required(), "scenario whose cluster, model and cost model are used")
      ("output,o", po::value<std::string>()->default_value("eppsim-out"), "output directory");
  add_scenario_options(options);
  const auto parsed = parse(args, options, {"schedule"});
  if (!parsed) return 0;
  const auto cluster =
      load_scenario((*parsed)["cluster"].as<std::string>(), overrides_from(*parsed), ScenarioPart::Simulation);
  proto::Schedule schedule;
  read_message((*parsed)["schedule"].as<std::string>(), &schedule);
  return finish_run(simulate_schedule(std::move(schedule), cluster, 0.0), (*parsed)["output"].as<std::string>());
}

int command_export(const std::vector<std::string>& args) {
  po::options_description options("eppsim export chrome TRACE -o FILE.json: Chrome trace JSON for Perfetto");
  options.add_options()
      ("format", po::value<std::string>()->required(), "export format: chrome")
      ("trace", po::value<std::string>()->required(), "trace file (.pb or .json)")
      ("output,o", po::value<std::string>()->required(), "output file");
  const auto parsed = parse(args, options, {"format", "trace"});
  if (!parsed) return 0;
  const auto format = (*parsed)["format"].as<std::string>();
  if (format != "chrome") throw InputError(fmt::format("export: unknown format '{}' (known: chrome)", format));
  proto::Trace trace;
  read_message((*parsed)["trace"].as<std::string>(), &trace);
  write_chrome_trace(trace, (*parsed)["output"].as<std::string>());
  return 0;
}

int command_presets(const std::vector<std::string>& args) {
  po::options_description options("eppsim presets: list GPU and model presets and strategies");
  const auto parsed = parse(args, options, {});
  if (!parsed) return 0;
  std::cout << "GPUs (dense BF16, HBM, HBM bandwidth, NVLink per direction):\n";
  for (const auto& g : gpu_presets()) {
    std::cout << fmt::format("  {:<12} {:>14} {:>10} {:>12} {:>12}\n", g.name, format_flops(g.peak_bf16),
                             format_bytes(g.memory), format_bandwidth(g.memory_bandwidth), format_bandwidth(g.nvlink_bandwidth));
  }
  std::cout << "models (layers, hidden, heads/kv, ffn, vocab, parameters):\n";
  for (const auto& m : model_presets()) {
    std::cout << fmt::format("  {:<12} {:>3} {:>6} {:>3}/{:<3} {:>6} {:>7} {:>7.2f}B\n", m.name, m.layers, m.hidden_size,
                             m.attention_heads, m.kv_heads, m.ffn_hidden_size, m.vocab_size, m.total_params() / 1e9);
  }
  std::cout << fmt::format("strategies: {}\n", fmt::join(planner_names(), ", "));
  return 0;
}

int dispatch(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--version" || args[0] == "version")) {
    std::cout << "eppsim " << eppsim_version() << '\n';
    return 0;
  }
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    std::cout << kUsage;
    return 0;
  }
  const std::map<std::string, std::function<int(const std::vector<std::string>&)>> commands = {
      {"run", command_run},       {"plan", command_plan},     {"sim", command_sim},
      {"export", command_export}, {"presets", command_presets}, {"topo", command_topo},
      {"compare", command_compare}};
  if (args.empty() || args[0].starts_with("-")) return command_quickstart(args);
  const auto it = commands.find(args[0]);
  if (it == commands.end()) {
    throw InputError(fmt::format("unknown command '{}' (commands: run, compare, topo, plan, sim, export, presets; see eppsim --help)", args[0]));
  }
  return it->second(std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace
}  // namespace eppsim

int main(int argc, char** argv) {
  try {
    return eppsim::dispatch(argc, argv);
  } catch (const eppsim::InputError& e) {
    std::cerr << "eppsim: error: " << e.what() << '\n';
    return 2;
  } catch (const po::error& e) {
    std::cerr << "eppsim: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "eppsim: failure: " << e.what() << '\n';
    return 1;
  }
}
