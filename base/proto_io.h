#pragma once
// Reading and writing any of our protobuf messages in binary, text or JSON.
// Writes are atomic: the bytes go to a temporary file beside the target, which
// is then renamed over it, so no reader ever sees half a file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/input_limits.h"

namespace google::protobuf {
class Message;
}

namespace eppsim {

enum class ProtoFormat { Binary, Text, Json };

// ".pb"/".bin" -> Binary, ".textproto"/".txtpb"/".pbtxt"/".txt" -> Text,
// ".json" -> Json; anything else is an InputError naming the path.
ProtoFormat proto_format_for(const std::filesystem::path& path);

// Writes `contents` to `path` atomically (temporary file + rename); creates
// missing parent directories. Throws std::runtime_error naming the path.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);
// Whole file; InputError naming the path when it cannot be read, when it is
// not a regular file (a directory, a FIFO or a device: never waited on), or
// when it holds more than `max_bytes` (checked before reading, and again
// while reading in case it grows).
std::string read_file(const std::filesystem::path& path, std::uint64_t max_bytes = limits::kMaxMessageFileBytes);

// JSON with snake_case field names (as in the .proto files) and default-valued
// fields included, 2-space indented. A top-level repeated message field of
// more than `splice_above` elements is printed `splice_above` elements at a
// time into its place (the same text): protobuf's printer first builds a tree
// node for every field of the whole message, 3 GB for a report of 1M ranks.
inline constexpr std::size_t kJsonSpliceAbove = 1024;
std::string to_json(const google::protobuf::Message& message, std::size_t splice_above = kJsonSpliceAbove);
// Strict: unknown fields are errors. `source` names the input in messages.
void from_json(std::string_view json, google::protobuf::Message* message, std::string_view source);

// protobuf's text format (what scenarios are written in).
std::string to_text(const google::protobuf::Message& message);
// Strict: unknown fields, bad syntax and repeated singular fields are errors
// "source:line:column: message" (1-based).
void from_text(std::string_view text, google::protobuf::Message* message, std::string_view source);

// The first field unknown to this build anywhere in `message`'s tree, as a
// dotted path ("(top level)", "op_events", "memory[3]"); empty when none.
std::string unknown_field_path(const google::protobuf::Message& message);

// Wire format, serialized deterministically (map entries in key order).
std::string to_binary(const google::protobuf::Message& message);
// Strict: malformed input and fields unknown to this build are errors.
void from_binary(std::string_view bytes, google::protobuf::Message* message, std::string_view source);

// The most bytes protobuf serialises or parses as one message (INT_MAX).
inline constexpr std::size_t kMaxBinaryMessageBytes = 2147483647;
// std::runtime_error "WHAT: TYPE would be N bytes, past ... (2 GiB) ...; write
// less of it ..." when `bytes` is past kMaxBinaryMessageBytes.
void check_binary_size(std::size_t bytes, std::string_view what, std::string_view type);

// Binary: sized first (check_binary_size, before any file is created), then
// streamed; a failed write names the system's error (system_error_text).
void write_message(const google::protobuf::Message& message, const std::filesystem::path& path, ProtoFormat format);
void write_message(const google::protobuf::Message& message, const std::filesystem::path& path);  // format from extension
// Strict in every format; errors name the path (and line:column for text).
void read_message(const std::filesystem::path& path, google::protobuf::Message* message, ProtoFormat format);
void read_message(const std::filesystem::path& path, google::protobuf::Message* message);

// The num_ranks a Schedule or Trace just read from `path` declares, checked
// before anything is sized by it: > 0 (0 is an empty, truncated or foreign
// file) and <= limits::kMaxRanks. InputError naming the path and the field.
void check_num_ranks(const google::protobuf::Message& message, std::uint32_t num_ranks,
                     const std::filesystem::path& path);

}  // namespace eppsim
