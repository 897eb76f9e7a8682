#include "base/index_list.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "base/errors.h"

namespace eppsim {

std::vector<std::uint32_t> parse_index_list(std::string_view list, std::uint32_t count, std::string_view option,
                                            std::string_view noun) {
  const auto bad = [&](std::string_view why) {
    return InputError(fmt::format("{} {}: {} (a list of {} indices and ranges: 0,3,7-9)", option, list, why, noun));
  };
  std::vector<std::uint32_t> indices;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string_view item = list.substr(at, comma - at);
    const std::size_t dash = item.find('-');
    const auto number = [&](std::string_view text) {
      if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos || text.size() > 9)
        throw bad(fmt::format("'{}' is not a {} index", text, noun));
      return static_cast<std::uint32_t>(std::stoul(std::string(text)));
    };
    const std::uint32_t first = number(item.substr(0, dash));
    const std::uint32_t last = dash == std::string_view::npos ? first : number(item.substr(dash + 1));
    if (last < first) throw bad(fmt::format("'{}' runs backwards", item));
    if (last >= count) throw bad(fmt::format("there are {}s 0 to {}", noun, count == 0 ? 0 : count - 1));
    for (std::uint32_t i = first; i <= last; ++i) indices.push_back(i);
    at = comma + 1;
  }
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

std::string format_index_list(std::span<const std::uint32_t> indices) {
  std::string text;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t last = i;
    while (last + 1 < indices.size() && indices[last + 1] == indices[last] + 1) ++last;
    if (!text.empty()) text += ',';
    text += last == i ? fmt::format("{}", indices[i]) : fmt::format("{}-{}", indices[i], indices[last]);
    i = last + 1;
  }
  return text;
}

}  // namespace eppsim
