#pragma once
// Lists of indices and ranges as people type them on a command line:
// "0,3,7-9" is 0, 3, 7, 8 and 9 (eppsim sweep --points, --trace-ranks).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace eppsim {

// The indices `list` names, ascending and each once. Every index must be
// below `count`. InputError "OPTION LIST: WHY (a list of NOUN indices and
// ranges: 0,3,7-9)" for an empty item, a non-number, a range that runs
// backwards or an index past the end ("... has NOUNs 0 to count-1").
std::vector<std::uint32_t> parse_index_list(std::string_view list, std::uint32_t count, std::string_view option,
                                            std::string_view noun);

// The inverse: ascending, distinct `indices` as that text ("0,3,7-9"; "" for none).
std::string format_index_list(std::span<const std::uint32_t> indices);

}  // namespace eppsim
