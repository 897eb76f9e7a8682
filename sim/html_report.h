#pragma once
// `eppsim run --html` and `eppsim compare --html`: DIR/report.html, one
// self-contained page (summary table, inline plots, links to the trace files)
// written by plots/report.py, which this runs as a child process.
//
// The plots directory is, in order: $EPPSIM_PLOTS_DIR; <prefix>/share/eppsim/plots
// beside an installed eppsim (<prefix>/bin/eppsim, put there by `cmake --install`);
// the source tree's plots/ that this binary was built from. The interpreter is
// $EPPSIM_PYTHON, else /usr/bin/python3 (Debian's, which has python3-matplotlib).
#include <filesystem>
#include <optional>

namespace eppsim {

// The folder holding report.py, by the rules above. Throws std::runtime_error
// listing the places looked in when none holds report.py.
std::filesystem::path plots_directory();

// Runs report.py on `dir` (a run or compare directory already written), passing
// `paper_json` (a reproduction's paper.json) when given; returns DIR/report.html.
// report.py writes the page atomically (a temporary file renamed over it).
// Throws std::runtime_error naming the command and how it ended when it fails
// or runs past 10 minutes; on SIGINT or SIGTERM, Interrupted saying that DIR
// holds its outputs without the page (the child is ended).
std::filesystem::path write_html_report(const std::filesystem::path& dir,
                                        const std::optional<std::filesystem::path>& paper_json = std::nullopt);

// The paper.json beside a scenario file (scenarios/SET/paper.json for a
// reproduction's scenario), if there is one.
std::optional<std::filesystem::path> paper_beside(const std::filesystem::path& scenario_file);

}  // namespace eppsim
