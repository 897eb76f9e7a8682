#pragma once
// ASTRA-sim's communicator-group file (its --comm-group-configuration): a JSON
// object from a group id, written as a decimal string, to the ranks (NPU ids)
// in the group, e.g. {"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]}. A COMM_COLL node
// names its group in the string attribute pg_name; ASTRA-sim reads pg_name ""
// and "0" as every rank, so the file's ids start at 1.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace eppsim {

// Group id -> ranks, in the order listed.
using ChakraCommGroups = std::map<std::uint64_t, std::vector<std::uint32_t>>;

// Strict: an object of non-negative integer keys to arrays of distinct
// non-negative integers below `num_ranks`; errors name `source`, the key and the rule.
ChakraCommGroups parse_chakra_comm_groups(std::string_view json, std::string_view source, std::uint32_t num_ranks);
ChakraCommGroups read_chakra_comm_groups(const std::filesystem::path& path, std::uint32_t num_ranks);
// The JSON text, keys in ascending order, one group a line.
std::string format_chakra_comm_groups(const ChakraCommGroups& groups);
// PREFIX.comm_groups.json: where `eppsim export chakra` writes the file and
// where import looks for it when none is named.
std::filesystem::path chakra_comm_groups_path(const std::filesystem::path& prefix);

}  // namespace eppsim
