#pragma once
// The command-line options the eppsim commands share (sim/cli/commands.cpp's
// command table picks them per command) and how their values are read.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/run.h"

namespace eppsim {

namespace po = boost::program_options;

void add_output_option(po::options_description& options);     // -o DIR (default eppsim-out)
// Options every command takes: --log, --max-memory, --help; applied (the log
// levels and the memory limit set) before the command runs.
void add_common_options(po::options_description& options);
void apply_common_options(const po::variables_map& vars);
void add_outputs_option(po::options_description& options);    // --outputs: which heavy files
void add_trace_ranks_option(po::options_description& options);  // --trace-ranks: whose op events (run, sim)
void add_html_option(po::options_description& options);       // --html
void add_scenario_option(po::options_description& options);   // the scenario file, positional
void add_engine_option(po::options_description& options);     // --engine
void add_set_option(po::options_description& options, std::string_view example);  // --set FIELD=VALUE
void add_strategies_option(po::options_description& options, const std::string& default_list);
void add_scenario_options(po::options_description& options);  // --strategy, --engine, --set
void add_comm_groups_option(po::options_description& options);  // --comm-groups (Chakra)

RunOutputs outputs_from(const po::variables_map& vars);
// --strategy, --engine and --set as scenario overrides, in that order.
std::vector<std::string> overrides_from(const po::variables_map& vars);
std::vector<std::string> strategies_from(const po::variables_map& vars, std::vector<std::string> fallback);
std::optional<std::filesystem::path> comm_groups_from(const po::variables_map& vars);

// The -o of a command that writes files into a directory (diff, validate,
// topo): it must be a directory or not exist yet. Checked before any work.
std::filesystem::path output_directory_of(const po::variables_map& vars);

// Every argument must be UTF-8: paths and names end up in eppsim's own
// outputs (JSON, protobuf strings), which could not be read back otherwise.
// InputError naming the command, the option and the text (bytes escaped).
void require_utf8_arguments(std::string_view command, const po::variables_map& vars);
// --name for each option of `options`, for error messages.
std::string option_names(const po::options_description& options);
// For a command line with more plain arguments than `positionals` (boost says
// only "too many"): "NAME: unexpected argument 'X': it takes 1 positional
// argument (scenario); see TITLE --help".
std::string unexpected_argument_message(std::string_view name, const std::vector<std::string>& positionals,
                                        const std::vector<std::string>& args, const po::options_description& options,
                                        std::string_view title);

}  // namespace eppsim
