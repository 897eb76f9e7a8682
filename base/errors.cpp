#include "base/errors.h"

#include <cerrno>

#include <system_error>

namespace eppsim {

std::string system_error_text(int error) {
  if (error == 0) return "no error reported by the system";
  return std::system_category().message(error);
}

bool is_path_error(int error) {
  switch (error) {
    case ENOENT: case ENOTDIR: case ENAMETOOLONG: case EACCES: case EPERM: case EROFS: case EISDIR: case ELOOP:
      return true;
    default:
      return false;
  }
}

}  // namespace eppsim
