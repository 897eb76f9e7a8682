// eppsim: plan, simulate and report long-context training schedules.
// Only this file turns errors into exit codes: 0 success, 2 bad input or
// arguments, 1 a failure of the machine or of eppsim, 128 + the signal's number.
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"
#include "base/interrupt.h"
#include "base/progress.h"
#include "base/standard_output.h"
#include "sim/cli/command_options.h"
#include "sim/cli/commands.h"
#include "sim/output_directory.h"
#include "schedule/executor/step_incomplete.h"

namespace fs = std::filesystem;

namespace eppsim {
namespace {

std::string usage() {
  std::string out =
      "usage: eppsim [COMMAND] [OPTIONS]\n\n"
      "Plans, simulates and reports training schedules of variable-length long-context LLM training.\n\n"
      "commands:\n";
  for (const auto& c : commands()) {
    out += fmt::format("  eppsim {}\n      {}\n", c.synopsis, c.help);
  }
  po::options_description common("options of every command");
  add_common_options(common);
  std::ostringstream options;
  options << common;
  out += "\n" + options.str();
  out += "\n`eppsim COMMAND --help` describes a command's options. Exit status: 0 success,\n"
         "2 bad input or arguments (paths included), 1 a failure of the machine or of eppsim,\n"
         "130 SIGINT, 143 SIGTERM.\n";
  return out;
}

// What an interrupted step finished, kept beside its output directory.
void keep_partial_trace(const proto::Trace& partial, const fs::path& out) {
  try {
    const fs::path kept = write_partial_trace(partial, out);
    const auto& incomplete = partial.incomplete();
    std::cerr << fmt::format("eppsim: kept the trace of what finished so far ({} of {} ops, up to {:.6f} s simulated) "
                             "in {}\n",
                             incomplete.ops_done(), incomplete.ops_total(),
                             static_cast<double>(incomplete.stopped_ns()) * 1e-9, kept.string());
  } catch (const std::exception& e) {
    std::cerr << fmt::format("eppsim: could not keep the partial trace beside {}: {}\n", out.string(), e.what());
  }
}

int run_command(const Command& command, const std::vector<std::string>& args) {
  const std::string title = command.name.empty() ? "eppsim" : fmt::format("eppsim {}", command.name);
  po::options_description options(fmt::format("{} options", title));
  command.add_options(options);
  add_common_options(options);
  po::positional_options_description positional;
  for (std::size_t i = 0; i < command.positionals.size(); ++i) {
    const bool repeats = command.last_positional_repeats && i + 1 == command.positionals.size();
    positional.add(command.positionals[i].c_str(), repeats ? -1 : 1);
  }
  po::variables_map vars;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vars);
    if (vars.count("help")) {
      if (command.name.empty()) {
        std::cout << usage() << '\n' << options;
      } else {
        std::cout << fmt::format("usage: eppsim {}\n\n{}\n\n", command.synopsis, command.help) << options;
      }
      return 0;
    }
    po::notify(vars);
    require_utf8_arguments(command.name, vars);
  } catch (const po::too_many_positional_options_error&) {
    throw InputError(unexpected_argument_message(command.name.empty() ? "(no command)" : command.name, command.positionals,
                                                 args, options, title));
  } catch (const po::error& e) {
    throw InputError(fmt::format("{}: {} (options: {}; see {} --help)", command.name.empty() ? "(no command)" : command.name,
                                 e.what(), option_names(options), title));
  }
  apply_common_options(vars);
  progress::enable_for_terminal();  // long runs show a progress line on a terminal, nothing otherwise
  try {
    return command.handler(vars);
  } catch (const StepInterrupted& e) {
    if (vars.count("output")) keep_partial_trace(e.partial_trace(), vars["output"].as<std::string>());
    throw;
  }
}

int dispatch(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    std::cout << usage();
    return 0;
  }
  if (!args.empty() && args[0] == "--version") args[0] = "version";
  // No command, or options only: the bare command.
  const std::string_view name = args.empty() || args[0].starts_with("-") ? std::string_view() : std::string_view(args[0]);
  for (const auto& command : commands()) {
    if (command.name != name) continue;
    if (!name.empty()) args.erase(args.begin());
    return run_command(command, args);
  }
  throw InputError(fmt::format("unknown command '{}' (commands: {}; see eppsim --help)", name,
                               fmt::join(command_names(), ", ")));
}

// What eppsim prints when a signal ends a run.
std::string interrupted_line(const Interrupted& e) { return fmt::format("eppsim: {}: {}\n", e.what(), e.outputs()); }

}  // namespace
}  // namespace eppsim

int main(int argc, char** argv) {
  eppsim::install_interrupt_handlers();
  // A run that has not unwound 0.5 s after SIGINT or SIGTERM ends here: the
  // output directory is replaced only by a complete run, and the next run into
  // the same place removes the staging directory left behind.
  eppsim::start_interrupt_deadline(std::chrono::milliseconds(500), [](int signal) {
    const std::string line = eppsim::interrupted_line(eppsim::Interrupted(signal));
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, line.data(), line.size());
    std::_Exit(128 + signal);
  });
  try {
    return eppsim::flush_standard_output("eppsim", eppsim::dispatch(argc, argv));
  } catch (const eppsim::Interrupted& e) {
    std::cerr << eppsim::interrupted_line(e);
    return 128 + e.signal();
  } catch (const eppsim::InputError& e) {
    std::cerr << "eppsim: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "eppsim: failure: " << e.what() << '\n';
    return 1;
  }
}
