#pragma once
// A file written whole or not at all: bytes go to a temporary file beside the
// target ("<path>.tmp-<pid>-<n>", created exclusively, so two writers never
// share one), and commit() renames it over the target. A writer destroyed
// before commit() (an error, an exception) removes its temporary, so no reader
// ever sees half a file and nothing is left behind. The temporaries of a
// writer killed outright (SIGKILL) are removed by the next writer of the same
// path once their process is gone. A path the user is at fault for (missing,
// too long, not writable: base/errors.h is_path_error) is an InputError.
//
// Large outputs (traces, CSV) are streamed through one: callers append in
// pieces, and nothing holds the whole file in memory.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace eppsim {

// The target, when it exists, must be a regular file: a symbolic link, a
// directory, a FIFO or a device is an InputError naming it, and is left alone.
class AtomicFileWriter {
 public:
  // Creates missing parent directories and the temporary file. Throws
  // std::runtime_error naming the path.
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Appends bytes; std::runtime_error naming the path on failure.
  void write(std::string_view bytes);
  // Closes and renames over the target; std::runtime_error naming the path.
  void commit();

  const std::filesystem::path& path() const { return path_; }
  // The temporary file's descriptor, for writers that stream through it
  // (protobuf's FileOutputStream); valid until commit().
  int descriptor() const { return fd_; }

 private:
  [[noreturn]] void fail(std::string_view what, int error);
  void discard() noexcept;

  std::filesystem::path path_;
  std::string temp_;
  int fd_ = -1;
};

// Appends to a buffer and hands it to an AtomicFileWriter whenever it holds
// more than `flush_bytes`, so formatters can build text piece by piece in a
// bounded buffer. `Buffer` is any contiguous char container with data(),
// size() and clear() (fmt::memory_buffer, std::string).
template <class Buffer>
void flush_if_full(Buffer& buffer, AtomicFileWriter& file, std::size_t flush_bytes = std::size_t{1} << 20) {
  if (buffer.size() < flush_bytes) return;
  file.write(std::string_view(buffer.data(), buffer.size()));
  buffer.clear();
}

}  // namespace eppsim
