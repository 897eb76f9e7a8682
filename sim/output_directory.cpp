#include "sim/output_directory.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "base/errors.h"
#include "schedule/trace_file.h"
#include "base/interrupt.h"
#include "base/proto_io.h"

namespace eppsim {
namespace fs = std::filesystem;
namespace {

// fmt rather than "." + string: GCC 12 at -O3 warns falsely (-Wrestrict) on a literal + a temporary.
std::string staging_prefix(const fs::path& dir) { return fmt::format(".{}.eppsim-partial-", dir.filename().string()); }

// Removes the staging directories that runs into `dir` left when killed (their
// process is gone).
void remove_stale_staging(const fs::path& dir) {
  const std::string prefix = staging_prefix(dir);
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir.parent_path(), error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    char* end = nullptr;
    const long pid = std::strtol(pid_text.c_str(), &end, 10);
    if (pid_text.empty() || *end != '\0' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // its run is alive (or not ours)
    fs::remove_all(entry.path(), error);
  }
}

void check_replaceable(const fs::path& dir) {
  std::error_code error;
  const auto status = fs::symlink_status(dir, error);
  if (!fs::exists(status)) return;
  const auto refuse = [&](std::string_view rule) {
    return InputError(fmt::format("{}: {}; give a new or empty directory, or remove it first", dir.string(), rule));
  };
  if (fs::is_symlink(status)) throw refuse("is a symbolic link, which eppsim does not replace");
  if (!fs::is_directory(status)) throw refuse("exists and is not a directory");
  const fs::path canonical = fs::weakly_canonical(dir);
  const fs::path cwd = fs::current_path();
  const auto rel = cwd.lexically_relative(canonical);
  if (!rel.empty() && *rel.begin() != "..") throw refuse("is the current directory or one of its parents");
  if (fs::is_empty(dir, error) || fs::exists(dir / OutputDirectory::kMarker, error)) return;
  throw refuse(fmt::format("holds files eppsim did not write (no {} in it)", OutputDirectory::kMarker));
}

}  // namespace

OutputLock::OutputLock(const fs::path& dir) {
  fs::path target = dir.filename().empty() ? dir.parent_path() : dir;
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(parent);
  file_ = parent / fmt::format(".{}.eppsim-lock", target.filename().string());
  fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const std::string message = fmt::format("{}: cannot open the lock file {}: {}", target.string(), file_.string(),
                                            system_error_text(errno));
    if (is_path_error(errno)) throw InputError(message);
    throw std::runtime_error(message);
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {};
    const ssize_t n = ::pread(fd_, holder, sizeof(holder) - 1, 0);
    ::close(fd_);
    fd_ = -1;
    throw InputError(fmt::format("{}: another eppsim run (pid {}) is writing it; wait for it or choose another -o",
                                 target.string(), n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : "?"));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message of a run that finds the lock taken.
  }
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(file_.c_str());  // while still held: a run that opened it before fails, one after makes a new one
  ::close(fd_);
}

OutputDirectory::OutputDirectory(fs::path dir) : dir_(std::move(dir)) {
  if (dir_.filename().empty()) dir_ = dir_.parent_path();  // "out/" names "out"
  if (dir_.empty()) throw InputError("output directory: empty path");
  check_replaceable(dir_);
  const fs::path parent = dir_.has_parent_path() ? dir_.parent_path() : fs::path(".");
  fs::create_directories(parent);
  remove_stale_staging(parent / dir_.filename());
  staging_ = parent / (staging_prefix(dir_) + std::to_string(::getpid()));
  fs::remove_all(staging_);
  fs::create_directory(staging_);
}

OutputDirectory::~OutputDirectory() {
  if (committed_) return;
  std::error_code ignored;
  fs::remove_all(staging_, ignored);
}

void OutputDirectory::commit() {
  throw_if_interrupted();  // an interrupted run replaces nothing
  std::ofstream(staging_ / kMarker) << "This directory was written by eppsim, which replaces it as a whole on the "
                                       "next run into it.\n";
  std::error_code error;
  if (!fs::exists(fs::symlink_status(dir_, error))) {
    fs::rename(staging_, dir_);
  } else {
    check_replaceable(dir_);  // again: it may have changed while the run ran
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0) {
      throw std::runtime_error(fmt::format("cannot replace {} with {}: {}", dir_.string(), staging_.string(),
                                           std::strerror(errno)));
    }
    fs::remove_all(staging_, error);  // now the old directory
  }
  committed_ = true;
}

std::filesystem::path write_partial_trace(const proto::Trace& partial, const std::filesystem::path& dir) {
  std::filesystem::path kept = dir.lexically_normal();
  if (!kept.has_filename()) kept = kept.parent_path();
  kept += ".interrupted-trace.pb";
  write_trace_file(partial, kept);
  return kept;
}

}  // namespace eppsim
