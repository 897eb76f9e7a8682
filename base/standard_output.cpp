#include "base/standard_output.h"

#include <cerrno>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "base/errors.h"

namespace eppsim {

int flush_standard_output(std::string_view program, int status) {
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (flushed && !std::ferror(stdout) && !std::cout.bad()) return status;
  std::cerr << fmt::format("{}: failure: cannot write to standard output: {}\n", program,
                           error != 0 ? system_error_text(error) : std::string("a write failed"));
  return status != 0 ? status : 1;
}

}  // namespace eppsim
