// eppsim-sweep-mpi: what `eppsim sweep` becomes under mpirun (sweep_ranks.h).
//   eppsim-sweep-mpi --eppsim PATH SWEEP -o DIR [-j N] [--outputs LIST] [--points LIST] [--html] [--log SPEC]
// Exit status: 0 success, 2 bad input, 1 any other failure.
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>

#include <boost/program_options.hpp>

#include "base/errors.h"
#include "base/interrupt.h"
#include "base/log.h"
#include "base/progress.h"
#include "sim/sweep/sweep_file.h"
#include "sim/sweep/sweep_ranks.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  eppsim::install_interrupt_handlers();
  try {
    po::options_description options("eppsim-sweep-mpi options");
    options.add_options()("eppsim", po::value<std::string>()->required(), "the eppsim program, which runs each point")(
        "sweep", po::value<std::string>()->required(), "sweep file")(
        "output,o", po::value<std::string>()->required(), "output directory")(
        "jobs,j", po::value<std::uint32_t>()->default_value(0), "points at once per process")(
        "outputs", po::value<std::string>()->default_value("none"), "each point's run directory")(
        "points", po::value<std::string>()->default_value(""), "only these points")(
        "html", po::bool_switch(), "also the sweep's page")(
        "log", po::value<std::string>()->default_value(""), "log levels");
    po::positional_options_description positional;
    positional.add("sweep", 1);
    po::variables_map vars;
    try {
      po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(), vars);
      po::notify(vars);
    } catch (const po::error& e) {
      throw eppsim::InputError(std::string("eppsim-sweep-mpi: ") + e.what());
    }
    eppsim::logging::configure(vars["log"].as<std::string>());
    eppsim::progress::enable_for_terminal();
    eppsim::SweepOptions sweep;
    sweep.eppsim = vars["eppsim"].as<std::string>();
    sweep.output = vars["output"].as<std::string>();
    sweep.jobs = vars["jobs"].as<std::uint32_t>();
    sweep.outputs = vars["outputs"].as<std::string>();
    sweep.points = vars["points"].as<std::string>();
    sweep.html = vars["html"].as<bool>();
    eppsim::SweepPlan plan = eppsim::read_sweep(vars["sweep"].as<std::string>());
    if (!sweep.points.empty()) eppsim::select_points(&plan, sweep.points);
    eppsim::run_sweep(plan, sweep);
    return 0;
  } catch (const eppsim::Interrupted& e) {
    std::cerr << "eppsim sweep: " << e.what() << ": finished points are kept; rerun to run the rest\n";
    return 128 + e.signal();
  } catch (const eppsim::InputError& e) {
    std::cerr << "eppsim: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "eppsim: failure: " << e.what() << '\n';
    return 1;
  }
}
