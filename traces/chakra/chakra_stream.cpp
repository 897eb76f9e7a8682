#include "traces/chakra/chakra_stream.h"

#include <system_error>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "base/errors.h"
#include "base/proto_io.h"
#include "base/protobuf_log.h"

namespace eppsim {
namespace {

namespace pbio = google::protobuf::io;

// Appends the varint length of `message` and its bytes (deterministic) to `out`.
void append_delimited(const google::protobuf::Message& message, std::string& out) {
  const std::string body = to_binary(message);
  pbio::StringOutputStream stream(&out);
  pbio::CodedOutputStream coded(&stream);
  coded.WriteVarint64(body.size());
  coded.WriteRaw(body.data(), static_cast<int>(body.size()));
}

}  // namespace

ChakraRankTrace parse_chakra_stream(std::string_view bytes, std::string_view source, const ChakraLimits& limits) {
  if (bytes.size() > limits.max_file_bytes) {
    throw InputError(fmt::format("{}: {} bytes, more than the limit of {} bytes for a Chakra trace file", source,
                                 bytes.size(), limits.max_file_bytes));
  }
  if (bytes.empty()) throw InputError(fmt::format("{}: empty: a Chakra trace starts with a GlobalMetadata message", source));
  ChakraRankTrace trace;
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  pbio::CodedInputStream in(data, static_cast<int>(bytes.size()));
  bool have_metadata = false;
  while (static_cast<std::size_t>(in.CurrentPosition()) < bytes.size()) {
    const auto offset = static_cast<std::size_t>(in.CurrentPosition());
    // What the message at `offset` is, for errors: the metadata or the n-th node.
    const std::string what = have_metadata ? fmt::format("node #{}", trace.nodes.size()) : std::string("GlobalMetadata");
    std::uint64_t length = 0;
    if (!in.ReadVarint64(&length)) {
      throw InputError(fmt::format("{}: byte {} ({}): truncated or malformed length prefix (a varint)", source, offset, what));
    }
    const auto body = static_cast<std::size_t>(in.CurrentPosition());
    if (length > limits.max_message_bytes) {
      throw InputError(fmt::format("{}: byte {} ({}): message of {} bytes is over the limit of {} bytes", source, offset,
                                   what, length, limits.max_message_bytes));
    }
    if (length > bytes.size() - body) {
      throw InputError(fmt::format("{}: byte {} ({}): message of {} bytes runs past the end of the file ({} bytes)",
                                   source, offset, what, length, bytes.size()));
    }
    const auto size = static_cast<int>(length);
    const ProtobufLogCapture said;
    if (!have_metadata) {
      if (!trace.metadata.ParseFromArray(data + body, size)) {
        throw InputError(fmt::format("{}: byte {} (GlobalMetadata): not a valid GlobalMetadata message{}", source, offset,
                                     said.detail()));
      }
      have_metadata = true;
    } else {
      if (trace.nodes.size() >= limits.max_nodes) {
        throw InputError(fmt::format("{}: byte {}: more than the limit of {} nodes", source, offset, limits.max_nodes));
      }
      chakra::Node node;
      if (!node.ParseFromArray(data + body, size)) {
        throw InputError(fmt::format("{}: byte {} ({}): not a valid Node message{}", source, offset, what, said.detail()));
      }
      trace.nodes.push_back(std::move(node));
    }
    in.Skip(size);
  }
  return trace;
}

std::string serialize_chakra_stream(const ChakraRankTrace& trace) {
  std::string out;
  append_delimited(trace.metadata, out);
  for (const auto& node : trace.nodes) append_delimited(node, out);
  return out;
}

std::filesystem::path chakra_rank_path(const std::filesystem::path& prefix, std::uint32_t rank) {
  std::filesystem::path path = prefix;
  path += fmt::format(".{}.et", rank);
  return path;
}

bool is_chakra_prefix(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return false;
  return std::filesystem::is_regular_file(chakra_rank_path(path, 0), ec);
}

ChakraRankTrace read_chakra_rank_file(const std::filesystem::path& path, const ChakraLimits& limits) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read: {}", path.string(), ec.message()));
  if (size > limits.max_file_bytes) {
    throw InputError(fmt::format("{}: {} bytes, more than the limit of {} bytes for a Chakra trace file", path.string(),
                                 size, limits.max_file_bytes));
  }
  return parse_chakra_stream(read_file(path, limits.max_file_bytes), path.string(), limits);
}

std::vector<ChakraRankTrace> read_chakra_prefix(const std::filesystem::path& prefix, const ChakraLimits& limits) {
  if (!is_chakra_prefix(prefix)) {
    throw InputError(fmt::format("{}: not a Chakra trace prefix: {} does not exist", prefix.string(),
                                 chakra_rank_path(prefix, 0).string()));
  }
  std::vector<ChakraRankTrace> ranks;
  std::error_code ec;
  for (std::uint32_t r = 0; std::filesystem::is_regular_file(chakra_rank_path(prefix, r), ec); ++r) {
    if (r >= limits.max_ranks) {
      throw InputError(fmt::format("{}: more than the limit of {} rank files", prefix.string(), limits.max_ranks));
    }
    ranks.push_back(read_chakra_rank_file(chakra_rank_path(prefix, r), limits));
  }
  return ranks;
}

void write_chakra_prefix(const std::filesystem::path& prefix, const std::vector<ChakraRankTrace>& ranks) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    write_file_atomically(chakra_rank_path(prefix, static_cast<std::uint32_t>(r)), serialize_chakra_stream(ranks[r]));
  }
}

}  // namespace eppsim
