#pragma once
// The eppsim commands: one table from which sim/cli/main.cpp generates the
// usage, dispatches a command line and turns errors into exit codes, and the
// handler of each command.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

namespace eppsim {

namespace po = boost::program_options;

// One entry per command: usage, dispatch and errors are generated from it.
struct Command {
  std::string_view name;      // "" for the bare command (the embedded showcase)
  std::string_view synopsis;  // what follows "eppsim"
  std::string_view help;      // one line
  std::vector<std::string> positionals;  // options filled by position, in order
  std::function<void(po::options_description&)> add_options;
  std::function<int(const po::variables_map&)> handler;
  bool last_positional_repeats = false;  // the last positional takes every remaining argument
};

// Every command, the bare one (the embedded showcase) first.
const std::vector<Command>& commands();
// Their names, without the bare command's.
std::vector<std::string_view> command_names();

}  // namespace eppsim
