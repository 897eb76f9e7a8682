#include "models/preset_name.h"

#include <cctype>

namespace eppsim {

std::string normalize_preset_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) out.push_back(c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

}  // namespace eppsim
