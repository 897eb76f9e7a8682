#include "base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "base/errors.h"

namespace eppsim {
namespace {

// Removes the temporaries of `path` ("<path>.tmp-<pid>-<n>") that writers
// killed before they could (SIGKILL) left behind: those whose process is gone.
void remove_stale_temporaries(const std::filesystem::path& path) {
  const std::string prefix = path.filename().string() + ".tmp-";
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '-' || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::filesystem::remove(entry.path(), error);
  }
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
  if (path_.empty()) throw std::runtime_error("cannot write a file with an empty name");
  // Only a regular file is ever replaced: the rename would put a file where a
  // symbolic link, FIFO or device was (or fail on a directory).
  std::error_code status_error;
  const auto type = std::filesystem::symlink_status(path_, status_error).type();
  if (!status_error && type != std::filesystem::file_type::regular) {
    const char* what = type == std::filesystem::file_type::symlink     ? "a symbolic link"
                       : type == std::filesystem::file_type::directory ? "a directory"
                       : type == std::filesystem::file_type::fifo      ? "a FIFO"
                       : type == std::filesystem::file_type::block || type == std::filesystem::file_type::character
                           ? "a device"
                           : "not a regular file";
    throw InputError(fmt::format("{}: the output exists and is {}; eppsim only replaces regular files (not a regular "
                                 "file: give another path)",
                                 path_.string(), what));
  }
  const std::filesystem::path parent = path_.parent_path();
  if (!parent.empty()) {
    std::error_code error;
    std::filesystem::create_directories(parent, error);
    if (error) {  // e.g. a part of the path is a file: the path given is at fault
      throw InputError(
          fmt::format("{}: cannot create directory {}: {}", path_.string(), parent.string(), error.message()));
    }
  }
  // Beside the target, so that the rename stays on one file system.
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_ = fmt::format("{}.tmp-{}-{}", path_.string(), ::getpid(), counter.fetch_add(1));
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) {
      const std::string message =
          fmt::format("{}: cannot create temporary file {}: {}", path_.string(), temp_, system_error_text(errno));
      if (is_path_error(errno)) throw InputError(message);
      throw std::runtime_error(message);
    }
  }
  remove_stale_temporaries(path_);
  if (fd_ < 0) throw std::runtime_error(fmt::format("{}: cannot create a temporary file beside it", path_.string()));
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
}

void AtomicFileWriter::fail(std::string_view what, int error) {
  discard();
  throw std::runtime_error(fmt::format("{}: {}: {}", path_.string(), what, system_error_text(error)));
}

void AtomicFileWriter::write(std::string_view bytes) {
  if (fd_ < 0) throw std::logic_error(fmt::format("{}: write after commit", path_.string()));
  const char* data = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t written = ::write(fd_, data, std::min<std::size_t>(left, std::size_t{1} << 30));
    if (written < 0) {
      if (errno == EINTR) continue;
      fail("write failed", errno);
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) throw std::logic_error(fmt::format("{}: committed twice", path_.string()));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temp_.c_str());
    throw std::runtime_error(fmt::format("{}: close failed: {}", path_.string(), system_error_text(error)));
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_.c_str());
    throw std::runtime_error(
        fmt::format("{}: cannot rename {} over it: {}", path_.string(), temp_, system_error_text(error)));
  }
}

}  // namespace eppsim
