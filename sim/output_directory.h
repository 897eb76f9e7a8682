#pragma once
// A run's output directory, replaced as a whole: the run writes into a
// staging directory beside it (`.NAME.eppsim-partial-PID` in the same parent)
// and commit() swaps the staging directory in for the old one in one atomic
// rename (renameat2 RENAME_EXCHANGE), then removes the old one. So a
// directory never mixes two runs' files, and a run that fails or is killed
// leaves the previous complete directory as it was (its staging directory is
// removed on failure, and by the next run into the same place when killed).
//
// Only what eppsim wrote is replaced: an existing DIR must be a directory
// that is empty or holds the marker file `.eppsim-output` that commit()
// writes; otherwise (a file, a symbolic link, someone's folder, the current
// directory or one of its parents) is an InputError naming DIR and the rule.
#include <filesystem>

#include "proto/trace.pb.h"

namespace eppsim {

// A step interrupted by SIGINT or SIGTERM (StepInterrupted,
// schedule/executor/step_incomplete.h) keeps the trace of what finished in
// DIR.interrupted-trace.pb beside its output directory DIR, which keeps what
// it held before. Writes it atomically and returns its path.
std::filesystem::path write_partial_trace(const proto::Trace& partial, const std::filesystem::path& dir);

// A lock on an output directory for the whole of a run, so that two runs
// into one directory never interleave: flock(2) on `.NAME.eppsim-lock` beside
// it, taken without waiting. Throws InputError "DIR: another eppsim run (pid
// N) is writing it" when held. The lock file is removed on release.
class OutputLock {
 public:
  explicit OutputLock(const std::filesystem::path& dir);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::filesystem::path file_;
  int fd_ = -1;
};

class OutputDirectory {
 public:
  static constexpr const char* kMarker = ".eppsim-output";

  // Checks `dir` (see above), removes stale staging directories of killed
  // runs, creates the staging directory.
  explicit OutputDirectory(std::filesystem::path dir);
  // Not committed: removes the staging directory.
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  // Where the run writes its files.
  const std::filesystem::path& staging() const { return staging_; }
  const std::filesystem::path& path() const { return dir_; }
  // Swaps the staging directory in for `dir` (see above). Throws
  // std::runtime_error naming the paths when a rename fails.
  void commit();

 private:
  std::filesystem::path dir_;
  std::filesystem::path staging_;
  bool committed_ = false;
};

}  // namespace eppsim
