#pragma once
// A protobuf message of any size as a file of parts: protobuf writes and
// parses at most 2 GiB as one message (kMaxBinaryMessageBytes), and a trace
// or Schedule of a 16K-GPU step is more. The file holds the message as a
// sequence of partial messages of its type, each a few MiB, whose merge in
// order (Message::MergeFrom: repeated fields append) is the message; so
// neither writing nor reading ever handles more than a part at a time beyond
// the message itself.
//
// Layout (version 1), framed with protobuf's varints and delimited messages:
//   "EPPSTRM\n"          8 bytes of magic
//   varint n, n bytes    the message's full type name, e.g. "eppsim.proto.Trace"
//   varint 1             the format version
//   varint n, n bytes    a part (n > 0), as many as there are
//   varint 0             the end of the parts
//   varint k             the number of parts: a file cut short lacks it
// A binary message of the single-message form never starts with the magic: its
// first byte 'E' would be field 8 with wire type 5 (fixed32), which neither a
// Trace nor a Schedule has.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string_view>

#include "base/atomic_file.h"

namespace google::protobuf {
class Message;
namespace io {
class FileOutputStream;
class CodedOutputStream;
}  // namespace io
}  // namespace google::protobuf

namespace eppsim {

inline constexpr std::string_view kMessageStreamMagic = "EPPSTRM\n";
inline constexpr std::uint32_t kMessageStreamVersion = 1;
// The size writers aim each part at, and the most a reader accepts of one.
inline constexpr std::size_t kMessageStreamPartBytes = std::size_t{32} << 20;
inline constexpr std::size_t kMaxMessageStreamPartBytes = std::size_t{1} << 30;

// Writes the file atomically (base/atomic_file.h): nothing is at `path` until
// commit(). Failed writes are std::runtime_error naming the path and the
// system's error.
class MessageStreamWriter {
 public:
  // `type`: the full name of the message type the parts are of.
  MessageStreamWriter(const std::filesystem::path& path, std::string_view type);
  ~MessageStreamWriter();
  MessageStreamWriter(const MessageStreamWriter&) = delete;
  MessageStreamWriter& operator=(const MessageStreamWriter&) = delete;

  // Appends a part (deterministic serialisation); an empty part is skipped.
  void write_part(const google::protobuf::Message& part);
  // The end marker and the count, then the rename.
  void commit();

 private:
  void check_stream(std::string_view what) const;

  AtomicFileWriter file_;
  std::unique_ptr<google::protobuf::io::FileOutputStream> output_;
  std::unique_ptr<google::protobuf::io::CodedOutputStream> coded_;
  std::uint64_t parts_ = 0;
};

// Parts of `Part` holding the repeated message field `items`, in slices of
// about `part_bytes`: `add(part)` adds an item to a part and returns it (e.g.
// [](proto::Trace& p) { return p.add_memory(); }).
template <class Part, class Items, class Add>
void write_slices(MessageStreamWriter& stream, const Items& items, Add add,
                  std::size_t part_bytes = kMessageStreamPartBytes) {
  Part part;
  std::size_t bytes = 0;
  for (const auto& item : items) {
    *add(part) = item;
    bytes += item.ByteSizeLong() + 2;
    if (bytes >= part_bytes) {
      stream.write_part(part);
      part.Clear();
      bytes = 0;
    }
  }
  stream.write_part(part);
}

// Whether the file at `path` starts with the magic (false when it cannot be read).
bool is_message_stream(const std::filesystem::path& path);

// Reads a message stream part by part, holding one part at a time. InputError
// naming the path and the byte where the header or part that breaks the rule
// starts: a different type, an unknown version, a part that is empty of
// bytes, larger than kMaxMessageStreamPartBytes, malformed or with fields
// unknown to this build, a file cut short (no end marker or count) or with
// bytes after its count.
class MessageStreamReader {
 public:
  // Opens `path` and reads its header; `type`: the full name of the message
  // type the parts must be of.
  MessageStreamReader(const std::filesystem::path& path, std::string_view type);
  ~MessageStreamReader();
  MessageStreamReader(const MessageStreamReader&) = delete;
  MessageStreamReader& operator=(const MessageStreamReader&) = delete;

  // The next part into `part` (cleared first); false at the end, once the
  // count and the end of the file are checked.
  bool next_part(google::protobuf::Message* part);
  std::uint64_t file_bytes() const;
  // The byte where the part last read starts: for errors found in it.
  std::uint64_t part_offset() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Reads a message stream into `message` (cleared first), part by part.
// InputError naming the path and the byte where the header or part that
// breaks the rule starts: a different type, an unknown version, a part
// that is empty of bytes, larger than kMaxMessageStreamPartBytes, malformed or
// with fields unknown to this build, a file cut short (no end marker or
// count) or with bytes after its count.
void read_message_stream(const std::filesystem::path& path, google::protobuf::Message* message);

// A copy of `message` without the fields `excluded_field_numbers` names
// (they are left empty): the first part of a message whose large fields are
// written in slices after it.
std::unique_ptr<google::protobuf::Message> message_without_fields(const google::protobuf::Message& message,
                                                                  std::initializer_list<int> excluded_field_numbers);

}  // namespace eppsim
