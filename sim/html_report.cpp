#include "sim/html_report.h"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/interrupt.h"
#include "base/subprocess.h"

namespace eppsim {
namespace fs = std::filesystem;

fs::path plots_directory() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("EPPSIM_PLOTS_DIR"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  } else {
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    if (!error) candidates.push_back(self.parent_path().parent_path() / EPPSIM_INSTALL_DATADIR / "eppsim" / "plots");
    candidates.emplace_back(EPPSIM_SOURCE_PLOTS_DIR);
  }
  std::vector<std::string> tried;
  for (const auto& c : candidates) {
    if (fs::is_regular_file(c / "report.py")) return c;
    tried.push_back(c.string());
  }
  throw std::runtime_error(fmt::format("--html: no plots/report.py in {} (set EPPSIM_PLOTS_DIR to the plots folder)",
                                       fmt::join(tried, " or ")));
}

fs::path write_html_report(const fs::path& dir, const std::optional<fs::path>& paper_json) {
  const char* python = std::getenv("EPPSIM_PYTHON");
  ProcessRequest request;
  request.argv = {python != nullptr && *python != '\0' ? python : "/usr/bin/python3", "-B",
                  (plots_directory() / "report.py").string(), dir.string()};
  if (paper_json) request.argv.insert(request.argv.end(), {"--paper", paper_json->string()});
  request.environment = {{"MPLBACKEND", "Agg"}};
  request.time_limit = std::chrono::seconds(600);
  const ProcessResult result = [&] {
    try {
      return run_process(request);
    } catch (const Interrupted& e) {
      throw Interrupted(e.signal(), fmt::format("{} holds the run's outputs, without report.html", dir.string()));
    }
  }();
  if (!result.succeeded()) {
    throw std::runtime_error(fmt::format("--html: {} failed ({}); the run's other files are written",
                                         command_line(request.argv), result.describe()));
  }
  return dir / "report.html";
}

std::optional<fs::path> paper_beside(const fs::path& scenario_file) {
  const fs::path paper = scenario_file.parent_path() / "paper.json";
  if (!fs::is_regular_file(scenario_file) || !fs::is_regular_file(paper)) return std::nullopt;
  return paper;
}

}  // namespace eppsim
