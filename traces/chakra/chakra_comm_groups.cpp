#include "traces/chakra/chakra_comm_groups.h"

#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "base/errors.h"
#include "base/proto_io.h"

namespace eppsim {

ChakraCommGroups parse_chakra_comm_groups(std::string_view json, std::string_view source, std::uint32_t num_ranks) {
  google::protobuf::Struct object;
  const auto status = google::protobuf::util::JsonStringToMessage(std::string(json), &object);
  if (!status.ok()) {
    // protobuf may append the offending text and a caret on further lines.
    const std::string reason = status.ToString();
    throw InputError(fmt::format("{}: not a JSON object of group id -> ranks: {}", source, reason.substr(0, reason.find('\n'))));
  }
  ChakraCommGroups groups;
  for (const auto& [key, value] : object.fields()) {
    std::uint64_t id = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || key.empty()) {
      throw InputError(fmt::format("{}: group \"{}\": the key must be a non-negative integer", source, key));
    }
    if (value.kind_case() != google::protobuf::Value::kListValue) {
      throw InputError(fmt::format("{}: group {}: must be an array of ranks", source, key));
    }
    std::vector<std::uint32_t> ranks;
    std::set<std::uint32_t> seen;
    for (const auto& v : value.list_value().values()) {
      const double r = v.kind_case() == google::protobuf::Value::kNumberValue ? v.number_value() : -1.0;
      if (r < 0 || r != std::floor(r) || r >= num_ranks) {
        throw InputError(fmt::format("{}: group {}: every member must be a rank in [0, {}), got {}", source, key,
                                     num_ranks, v.ShortDebugString()));
      }
      const auto rank = static_cast<std::uint32_t>(r);
      if (!seen.insert(rank).second) throw InputError(fmt::format("{}: group {}: rank {} listed twice", source, key, rank));
      ranks.push_back(rank);
    }
    if (ranks.empty()) throw InputError(fmt::format("{}: group {}: has no ranks", source, key));
    groups[id] = std::move(ranks);
  }
  return groups;
}

ChakraCommGroups read_chakra_comm_groups(const std::filesystem::path& path, std::uint32_t num_ranks) {
  return parse_chakra_comm_groups(read_file(path, limits::kMaxCommGroupsFileBytes), path.string(), num_ranks);
}

std::string format_chakra_comm_groups(const ChakraCommGroups& groups) {
  std::string out = "{";
  bool first = true;
  for (const auto& [id, ranks] : groups) {
    out += fmt::format("{}\n  \"{}\": [{}]", first ? "" : ",", id, fmt::join(ranks, ", "));
    first = false;
  }
  out += "\n}\n";
  return out;
}

std::filesystem::path chakra_comm_groups_path(const std::filesystem::path& prefix) {
  std::filesystem::path path = prefix;
  path += ".comm_groups.json";
  return path;
}

}  // namespace eppsim
