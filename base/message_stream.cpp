#include "base/message_stream.h"

#include <algorithm>
#include <cerrno>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/message.h>

#include "base/errors.h"
#include "base/interrupt.h"
#include "base/memory_limit.h"
#include "base/protobuf_log.h"
#include "base/proto_io.h"

namespace eppsim {

namespace pb = google::protobuf;

MessageStreamWriter::MessageStreamWriter(const std::filesystem::path& path, std::string_view type)
    : file_(path), output_(std::make_unique<pb::io::FileOutputStream>(file_.descriptor())) {
  coded_ = std::make_unique<pb::io::CodedOutputStream>(output_.get());
  coded_->WriteRaw(kMessageStreamMagic.data(), static_cast<int>(kMessageStreamMagic.size()));
  coded_->WriteVarint32(static_cast<std::uint32_t>(type.size()));
  coded_->WriteRaw(type.data(), static_cast<int>(type.size()));
  coded_->WriteVarint32(kMessageStreamVersion);
  check_stream("the stream's header");
}

MessageStreamWriter::~MessageStreamWriter() {
  // Before the file: the streams flush into its descriptor.
  coded_.reset();
  output_.reset();
}

void MessageStreamWriter::check_stream(std::string_view what) const {
  if (coded_->HadError()) {
    throw std::runtime_error(
        fmt::format("{}: cannot write {}: {}", file_.path().string(), what, system_error_text(output_->GetErrno())));
  }
}

void MessageStreamWriter::write_part(const pb::Message& part) {
  const std::size_t bytes = part.ByteSizeLong();
  if (bytes == 0) return;
  check_binary_size(bytes, file_.path().string(), fmt::format("a part of {}", part.GetTypeName()));
  coded_->WriteVarint64(bytes);
  coded_->SetSerializationDeterministic(true);
  part.SerializeWithCachedSizes(coded_.get());
  check_stream(fmt::format("part {} of {}", parts_, part.GetTypeName()));
  ++parts_;
}

void MessageStreamWriter::commit() {
  coded_->WriteVarint32(0);
  coded_->WriteVarint64(parts_);
  check_stream("the stream's end");
  coded_.reset();
  if (!output_->Flush()) {
    throw std::runtime_error(
        fmt::format("{}: cannot write the stream: {}", file_.path().string(), system_error_text(output_->GetErrno())));
  }
  output_.reset();
  file_.commit();
}

bool is_message_stream(const std::filesystem::path& path) {
  // O_NONBLOCK: a FIFO is not waited on (and is not a stream).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat info {};
  char head[8] = {};
  const bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  const auto got = regular ? ::read(fd, head, sizeof head) : 0;
  ::close(fd);
  return got == static_cast<ssize_t>(kMessageStreamMagic.size()) &&
         std::string_view(head, sizeof head) == kMessageStreamMagic;
}

struct MessageStreamReader::State {
  std::string file;
  std::string type;
  std::uint64_t file_bytes = 0;
  std::unique_ptr<pb::io::FileInputStream> raw;
  std::uint64_t parts = 0;
  std::uint64_t part_offset = 0;
  bool ended = false;

  // `at`: the byte where the part (or the header) that breaks the rule starts.
  InputError fail(std::string_view what, std::uint64_t at) const {
    return InputError(fmt::format("{}: not a valid stream of {}: {} (at byte {})", file, type, what, at));
  }
};

MessageStreamReader::MessageStreamReader(const std::filesystem::path& path, std::string_view type)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.file = path.string();
  s.type = std::string(type);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("{}: cannot open: {}", s.file, system_error_text(errno)));
  s.raw = std::make_unique<pb::io::FileInputStream>(fd);
  s.raw->SetCloseOnDelete(true);
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw InputError(fmt::format("{}: cannot stat: {}", s.file, system_error_text(errno)));
  s.file_bytes = static_cast<std::uint64_t>(info.st_size);
  pb::io::CodedInputStream coded(s.raw.get());
  std::string magic, written_type;
  std::uint32_t type_bytes = 0, version = 0;
  const auto here = [&] { return static_cast<std::uint64_t>(coded.CurrentPosition()); };
  if (!coded.ReadString(&magic, static_cast<int>(kMessageStreamMagic.size())) || magic != kMessageStreamMagic)
    throw s.fail("no magic \"EPPSTRM\" at its start", 0);
  if (!coded.ReadVarint32(&type_bytes) || type_bytes > 1024 || !coded.ReadString(&written_type, static_cast<int>(type_bytes)))
    throw s.fail("cut short in its header", here());
  if (written_type != s.type) throw s.fail(fmt::format("it holds {}", written_type), kMessageStreamMagic.size());
  if (!coded.ReadVarint32(&version)) throw s.fail("cut short in its header", here());
  if (version != kMessageStreamVersion) {
    throw s.fail(fmt::format("format version {}, but this build reads version {} (written by a newer eppsim?)", version,
                             kMessageStreamVersion),
                 here());
  }
}

MessageStreamReader::~MessageStreamReader() = default;

std::uint64_t MessageStreamReader::file_bytes() const { return state_->file_bytes; }
std::uint64_t MessageStreamReader::part_offset() const { return state_->part_offset; }

bool MessageStreamReader::next_part(pb::Message* part) {
  State& s = *state_;
  if (s.ended) return false;
  throw_if_interrupted();
  part->Clear();
  // A coded stream a part: one reads at most 2 GiB, the file may hold more.
  s.part_offset = static_cast<std::uint64_t>(s.raw->ByteCount());
  pb::io::CodedInputStream coded(s.raw.get());
  std::uint64_t bytes = 0;
  if (!coded.ReadVarint64(&bytes)) {
    if (s.raw->GetErrno() != 0) throw InputError(fmt::format("{}: cannot read: {}", s.file, system_error_text(s.raw->GetErrno())));
    throw s.fail(fmt::format("cut short after {} parts (no end marker)", s.parts), s.part_offset);
  }
  if (bytes == 0) {
    std::uint64_t count = 0;
    if (!coded.ReadVarint64(&count)) throw s.fail("cut short: no part count after the end marker", s.part_offset);
    if (count != s.parts) throw s.fail(fmt::format("its end says {} parts, but it holds {}", count, s.parts), s.part_offset);
    std::uint8_t extra = 0;
    if (coded.ReadRaw(&extra, 1)) throw s.fail(fmt::format("bytes after the end of its {} parts", s.parts), s.part_offset);
    if (s.raw->GetErrno() != 0) throw InputError(fmt::format("{}: cannot read: {}", s.file, system_error_text(s.raw->GetErrno())));
    s.ended = true;
    return false;
  }
  if (bytes > kMaxMessageStreamPartBytes) {
    throw s.fail(fmt::format("part {} declares {} bytes, past the {} a part may hold", s.parts, bytes,
                             kMaxMessageStreamPartBytes),
                 s.part_offset);
  }
  const std::uint64_t left = s.file_bytes - std::min(s.file_bytes, s.part_offset + coded.CurrentPosition());
  if (bytes > left) {
    throw s.fail(fmt::format("cut short: part {} declares {} bytes, but the file ends {} bytes on", s.parts, bytes, left),
                 s.part_offset);
  }
  const auto limit = coded.PushLimit(static_cast<int>(bytes));
  const ProtobufLogCapture said;
  if (!part->MergePartialFromCodedStream(&coded) || !coded.ConsumedEntireMessage() || coded.BytesUntilLimit() != 0) {
    throw s.fail(fmt::format("part {} ({} bytes) is not a valid binary {}{}", s.parts, bytes, s.type, said.detail()),
                 s.part_offset);
  }
  coded.PopLimit(limit);
  if (const std::string unknown = unknown_field_path(*part); !unknown.empty()) {
    throw InputError(fmt::format("{}: {} has fields unknown to this build in {} (written by a newer eppsim, or a "
                                 "different message type?) (part {}, at byte {})",
                                 s.file, s.type, unknown, s.parts, s.part_offset));
  }
  ++s.parts;
  return true;
}

void read_message_stream(const std::filesystem::path& path, pb::Message* message) {
  MessageStreamReader reader(path, message->GetDescriptor()->full_name());
  // The memory guard: a part's packed varints take up to some three times their
  // bytes once parsed (an event's 25 bytes become 64).
  check_memory_estimate(fmt::format("reading {} ({} bytes)", path.string(), reader.file_bytes()),
                        held_memory_bytes() + 3 * reader.file_bytes(), "read a smaller file, or raise --max-memory");
  message->Clear();
  std::unique_ptr<pb::Message> part(message->New());
  while (reader.next_part(part.get())) message->MergeFrom(*part);
}

namespace {

// Copies one set field from `from` into `to` (same type).
void copy_field(const pb::Message& from, pb::Message* to, const pb::FieldDescriptor* field) {
  const pb::Reflection* in = from.GetReflection();
  const pb::Reflection* out = to->GetReflection();
  using Cpp = pb::FieldDescriptor::CppType;
  if (!field->is_repeated()) {
    switch (field->cpp_type()) {
      case Cpp::CPPTYPE_INT32: out->SetInt32(to, field, in->GetInt32(from, field)); return;
      case Cpp::CPPTYPE_INT64: out->SetInt64(to, field, in->GetInt64(from, field)); return;
      case Cpp::CPPTYPE_UINT32: out->SetUInt32(to, field, in->GetUInt32(from, field)); return;
      case Cpp::CPPTYPE_UINT64: out->SetUInt64(to, field, in->GetUInt64(from, field)); return;
      case Cpp::CPPTYPE_DOUBLE: out->SetDouble(to, field, in->GetDouble(from, field)); return;
      case Cpp::CPPTYPE_FLOAT: out->SetFloat(to, field, in->GetFloat(from, field)); return;
      case Cpp::CPPTYPE_BOOL: out->SetBool(to, field, in->GetBool(from, field)); return;
      case Cpp::CPPTYPE_ENUM: out->SetEnumValue(to, field, in->GetEnumValue(from, field)); return;
      case Cpp::CPPTYPE_STRING: out->SetString(to, field, in->GetString(from, field)); return;
      case Cpp::CPPTYPE_MESSAGE: out->MutableMessage(to, field)->CopyFrom(in->GetMessage(from, field)); return;
    }
    return;
  }
  const int size = in->FieldSize(from, field);
  for (int i = 0; i < size; ++i) {
    switch (field->cpp_type()) {
      case Cpp::CPPTYPE_INT32: out->AddInt32(to, field, in->GetRepeatedInt32(from, field, i)); break;
      case Cpp::CPPTYPE_INT64: out->AddInt64(to, field, in->GetRepeatedInt64(from, field, i)); break;
      case Cpp::CPPTYPE_UINT32: out->AddUInt32(to, field, in->GetRepeatedUInt32(from, field, i)); break;
      case Cpp::CPPTYPE_UINT64: out->AddUInt64(to, field, in->GetRepeatedUInt64(from, field, i)); break;
      case Cpp::CPPTYPE_DOUBLE: out->AddDouble(to, field, in->GetRepeatedDouble(from, field, i)); break;
      case Cpp::CPPTYPE_FLOAT: out->AddFloat(to, field, in->GetRepeatedFloat(from, field, i)); break;
      case Cpp::CPPTYPE_BOOL: out->AddBool(to, field, in->GetRepeatedBool(from, field, i)); break;
      case Cpp::CPPTYPE_ENUM: out->AddEnumValue(to, field, in->GetRepeatedEnumValue(from, field, i)); break;
      case Cpp::CPPTYPE_STRING: out->AddString(to, field, in->GetRepeatedString(from, field, i)); break;
      case Cpp::CPPTYPE_MESSAGE: out->AddMessage(to, field)->CopyFrom(in->GetRepeatedMessage(from, field, i)); break;
    }
  }
}

}  // namespace

std::unique_ptr<pb::Message> message_without_fields(const pb::Message& message,
                                                    std::initializer_list<int> excluded_field_numbers) {
  std::unique_ptr<pb::Message> copy(message.New());
  std::vector<const pb::FieldDescriptor*> fields;
  message.GetReflection()->ListFields(message, &fields);
  for (const pb::FieldDescriptor* field : fields) {
    bool excluded = false;
    for (const int number : excluded_field_numbers) excluded = excluded || field->number() == number;
    if (!excluded) copy_field(message, copy.get(), field);
  }
  return copy;
}

}  // namespace eppsim
