#include "base/errors.h"

#include <system_error>

namespace eppsim {

std::string system_error_text(int error) {
  if (error == 0) return "no error reported by the system";
  return std::system_category().message(error);
}

}  // namespace eppsim
