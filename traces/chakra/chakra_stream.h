#pragma once
// Chakra execution-trace files (MLCommons Chakra ET; schema in
// proto/chakra_et.proto): one file per rank, PREFIX.<rank>.et, each a
// stream of varint-length-prefixed protobuf messages, one GlobalMetadata and
// then the rank's Nodes. This is how ASTRA-sim names and reads them.
//
// Reads are bounded (ChakraLimits): a file, a message and the node count have
// ceilings, so a corrupt or hostile file fails fast instead of exhausting
// memory. Truncated or corrupt input is an InputError naming the file, the byte
// offset (and the node when known) and the rule, e.g.
//   "t.3.et: byte 812 (node 41): message of 96 bytes runs past the end of the file (880 bytes)".
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "proto/chakra_et.pb.h"

namespace eppsim {

struct ChakraLimits {
  std::uint64_t max_file_bytes = std::uint64_t{1} << 30;      // one rank's file (protobuf reads at most 2 GiB)
  std::uint64_t max_message_bytes = std::uint64_t{64} << 20;  // one Node or the GlobalMetadata
  std::uint64_t max_nodes = std::uint64_t{1} << 24;           // per rank
  std::uint32_t max_ranks = 1u << 20;                         // files of a prefix
};

// One rank's trace: its metadata and its nodes in file order.
struct ChakraRankTrace {
  chakra::GlobalMetadata metadata;
  std::vector<chakra::Node> nodes;
};

// Decodes one rank's stream; `source` names it in errors. An empty stream, or
// one without a GlobalMetadata, is an error.
ChakraRankTrace parse_chakra_stream(std::string_view bytes, std::string_view source, const ChakraLimits& limits = {});
// The stream of `trace`: metadata first, then the nodes.
std::string serialize_chakra_stream(const ChakraRankTrace& trace);

// PREFIX.<rank>.et
std::filesystem::path chakra_rank_path(const std::filesystem::path& prefix, std::uint32_t rank);
// True when `path` names a Chakra prefix: no file of that name, but PREFIX.0.et exists.
bool is_chakra_prefix(const std::filesystem::path& path);

ChakraRankTrace read_chakra_rank_file(const std::filesystem::path& path, const ChakraLimits& limits = {});
// Every rank's file of `prefix`: PREFIX.0.et, PREFIX.1.et, ... up to the first
// missing one. No PREFIX.0.et is an error.
std::vector<ChakraRankTrace> read_chakra_prefix(const std::filesystem::path& prefix, const ChakraLimits& limits = {});
// Writes PREFIX.<rank>.et for every rank (atomically, each), creating the folder.
void write_chakra_prefix(const std::filesystem::path& prefix, const std::vector<ChakraRankTrace>& ranks);

}  // namespace eppsim
