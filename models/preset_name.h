#pragma once
// How preset names are matched: case-insensitively, with '_' read as '-'.
#include <string>
#include <string_view>

namespace eppsim {

std::string normalize_preset_name(std::string_view name);

}  // namespace eppsim
