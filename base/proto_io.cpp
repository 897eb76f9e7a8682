#include "base/proto_io.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>

#include "base/errors.h"
#include "base/atomic_file.h"
#include "base/text_parse.h"
#include "base/protobuf_log.h"

namespace eppsim {
namespace {

std::string find_unknown_field(const google::protobuf::Message& message, const std::string& prefix) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  if (!reflection->GetUnknownFields(message).empty())
    return prefix.empty() ? std::string("(top level)") : prefix;
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string path = prefix.empty() ? field->name() : prefix + "." + field->name();
    if (field->is_repeated()) {
      const int size = reflection->FieldSize(message, field);
      for (int i = 0; i < size; ++i) {
        std::string found =
            find_unknown_field(reflection->GetRepeatedMessage(message, field, i), fmt::format("{}[{}]", path, i));
        if (!found.empty()) return found;
      }
    } else {
      std::string found = find_unknown_field(reflection->GetMessage(message, field), path);
      if (!found.empty()) return found;
    }
  }
  return {};
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

std::string unknown_field_path(const google::protobuf::Message& message) { return find_unknown_field(message, ""); }

ProtoFormat proto_format_for(const std::filesystem::path& path) {
  const std::string extension = lowercase(path.extension().string());
  if (extension == ".pb" || extension == ".bin") return ProtoFormat::Binary;
  if (extension == ".textproto" || extension == ".txtpb" || extension == ".pbtxt" || extension == ".txt")
    return ProtoFormat::Text;
  if (extension == ".json") return ProtoFormat::Json;
  throw InputError(fmt::format("{}: unknown file extension '{}' (binary: .pb, .bin; text: .textproto, .txtpb, "
                               ".pbtxt, .txt; JSON: .json)",
                               path.string(), extension));
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  AtomicFileWriter file(path);
  file.write(contents);
  file.commit();
}

std::string read_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("{}: cannot open: {}", path.string(), system_error_text(errno)));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(::fdopen(fd, "rb"), &std::fclose);
  if (!file) {
    ::close(fd);
    throw InputError(fmt::format("{}: cannot open: {}", path.string(), system_error_text(errno)));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw InputError(fmt::format("{}: cannot stat: {}", path.string(), system_error_text(errno)));
  if (S_ISDIR(info.st_mode)) throw InputError(fmt::format("{}: is a directory, not a file", path.string()));
  if (!S_ISREG(info.st_mode))
    throw InputError(fmt::format("{}: not a regular file (a FIFO, socket or device cannot be read as input)", path.string()));
  const auto too_large = [&](std::uint64_t bytes) {
    return InputError(fmt::format("{}: {} bytes is too large: input files of this kind hold at most {} bytes",
                                  path.string(), bytes, max_bytes));
  };
  if (static_cast<std::uint64_t>(info.st_size) > max_bytes) throw too_large(static_cast<std::uint64_t>(info.st_size));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string contents;
  contents.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(buffer, 1, sizeof buffer, file.get());
    if (contents.size() + got > max_bytes) throw too_large(contents.size() + got);
    contents.append(buffer, got);
    if (got < sizeof buffer) {
      if (std::ferror(file.get()))
        throw InputError(fmt::format("{}: cannot read: {}", path.string(), system_error_text(errno)));
      break;
    }
  }
  return contents;
}

namespace {

// protobuf's JSON printer, two spaces a level.
std::string printed_json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  // MessageToJsonString prints map entries in hash order, which differs from
  // run to run; printed from the deterministic wire format (map entries sorted
  // by key) they come out the same every time.
  namespace pb = google::protobuf;
  static const std::unique_ptr<pb::util::TypeResolver> resolver(
      pb::util::NewTypeResolverForDescriptorPool("type.googleapis.com", pb::DescriptorPool::generated_pool()));
  std::string json;
  const auto status = pb::util::BinaryToJsonString(resolver.get(), "type.googleapis.com/" + message.GetDescriptor()->full_name(),
                                                   to_binary(message), &json, options);
  if (!status.ok())
    throw std::runtime_error(fmt::format("cannot print {} as JSON: {}", message.GetTypeName(), status.ToString()));
  // protobuf indents by one space per level; we promise two. JSON strings hold
  // no raw line breaks, so every line's leading spaces are indentation.
  std::string indented;
  indented.reserve(json.size() + json.size() / 4);
  std::size_t begin = 0;
  while (begin < json.size()) {
    std::size_t end = json.find('\n', begin);
    end = end == std::string::npos ? json.size() : end + 1;
    const std::size_t text = json.find_first_not_of(' ', begin);
    const std::size_t depth = (text == std::string::npos || text > end ? end : text) - begin;
    indented.append(2 * depth, ' ');
    indented.append(json, begin + depth, end - begin - depth);
    begin = end;
  }
  return indented;
}

}  // namespace

std::string to_json(const google::protobuf::Message& message, std::size_t splice_above) {
  namespace pb = google::protobuf;
  const pb::Reflection& reflection = *message.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);
  std::vector<const pb::FieldDescriptor*> spliced;
  for (const auto* field : fields) {
    if (field->is_repeated() && !field->is_map() && field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE &&
        static_cast<std::size_t>(reflection.FieldSize(message, field)) > splice_above) {
      spliced.push_back(field);
    }
  }
  if (spliced.empty()) return printed_json(message);
  // The rest of the message prints each spliced field as `"name": []` on a
  // line of its own at the first level; its elements go between the brackets.
  std::unique_ptr<pb::Message> rest(message.New());
  rest->CopyFrom(message);
  for (const auto* field : spliced) rest->GetReflection()->ClearField(rest.get(), field);
  std::string json = printed_json(*rest);
  for (const auto* field : spliced) {
    const std::string open = fmt::format("\n  \"{}\": [", field->name());
    const std::size_t at = json.find(open + "]");
    if (at == std::string::npos) throw std::logic_error(fmt::format("to_json: {} not printed", field->full_name()));
    // Batches of `splice_above` elements, each printed in a message that holds
    // only them: its text between the brackets is theirs, laid out in place.
    std::string elements = open;
    const int count = reflection.FieldSize(message, field);
    const int batch = static_cast<int>(std::min<std::size_t>(splice_above, std::numeric_limits<int>::max()));
    for (int first = 0; first < count; first += batch) {
      std::unique_ptr<pb::Message> part(message.New());
      for (int i = first; i < std::min(count, first + batch); ++i) {
        part->GetReflection()->AddMessage(part.get(), field)->CopyFrom(reflection.GetRepeatedMessage(message, field, i));
      }
      const std::string text = printed_json(*part);
      const std::size_t begin = text.find(open) + open.size();
      const std::size_t end = text.find("\n  ]", begin);
      if (first > 0) elements.push_back(',');
      elements.append(text, begin, end - begin);
    }
    elements.append("\n  ]");
    json.replace(at, open.size() + 1, elements);
  }
  return json;
}

void from_json(std::string_view json, google::protobuf::Message* message, std::string_view source) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  message->Clear();
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (!status.ok()) {
    // protobuf may append the offending text and a caret on further lines.
    std::string_view reason(status.message().data(), status.message().size());
    reason = reason.substr(0, reason.find('\n'));
    throw InputError(fmt::format("{}: not a valid JSON {} message: {}", source, message->GetTypeName(), reason));
  }
}

std::string to_text(const google::protobuf::Message& message) {
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(message, &text))
    throw std::runtime_error(fmt::format("cannot print {} as text", message.GetTypeName()));
  return text;
}

void from_text(std::string_view text, google::protobuf::Message* message, std::string_view source) {
  parse_text_strict(text, message, source);
}

void check_binary_size(std::size_t bytes, std::string_view what, std::string_view type) {
  if (bytes <= kMaxBinaryMessageBytes) return;
  throw std::runtime_error(fmt::format(
      "{}: {} would be {} bytes, past the {} bytes (2 GiB) protobuf writes as one message; write less of it "
      "(eppsim run --outputs without this file: e.g. --outputs csv, or none) or simulate fewer ranks",
      what, type, bytes, kMaxBinaryMessageBytes));
}

std::string to_binary(const google::protobuf::Message& message) {
  // Sized first: past protobuf's limit, serialising would fail with a log line of its own.
  check_binary_size(message.ByteSizeLong(), "a binary message", message.GetTypeName());
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream output(&bytes);
    google::protobuf::io::CodedOutputStream coded(&output);
    coded.SetSerializationDeterministic(true);
    message.SerializeWithCachedSizes(&coded);
    if (coded.HadError()) throw std::runtime_error(fmt::format("cannot serialize {}", message.GetTypeName()));
  }
  return bytes;
}

void from_binary(std::string_view bytes, google::protobuf::Message* message, std::string_view source) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError(fmt::format("{}: {} bytes is too large for a binary message (at most 2 GiB)", source,
                                 bytes.size()));
  const ProtobufLogCapture said;
  if (!message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw InputError(fmt::format("{}: not a valid binary {} message{}", source, message->GetTypeName(), said.detail()));
  if (const std::string unknown = unknown_field_path(*message); !unknown.empty()) {
    throw InputError(fmt::format("{}: binary {} message has fields unknown to this build in {} (written by a "
                                 "newer eppsim, or a different message type?)",
                                 source, message->GetTypeName(), unknown));
  }
}

void write_message(const google::protobuf::Message& message, const std::filesystem::path& path,
                   ProtoFormat format) {
  switch (format) {
    case ProtoFormat::Binary: {
      // Sized first (nothing is created for a message past protobuf's limit),
      // then streamed to the file: a large trace is never held twice in memory.
      check_binary_size(message.ByteSizeLong(), path.string(), message.GetTypeName());
      AtomicFileWriter file(path);
      {
        google::protobuf::io::FileOutputStream output(file.descriptor());
        google::protobuf::io::CodedOutputStream coded(&output);
        coded.SetSerializationDeterministic(true);
        message.SerializeWithCachedSizes(&coded);
        coded.Trim();
        if (coded.HadError() || !output.Flush()) {
          throw std::runtime_error(fmt::format("{}: cannot write {}: {}", path.string(), message.GetTypeName(),
                                               system_error_text(output.GetErrno())));
        }
      }
      file.commit();
      return;
    }
    case ProtoFormat::Text: write_file_atomically(path, to_text(message)); return;
    case ProtoFormat::Json: write_file_atomically(path, to_json(message)); return;
  }
  throw std::logic_error("write_message: bad ProtoFormat");
}

void write_message(const google::protobuf::Message& message, const std::filesystem::path& path) {
  write_message(message, path, proto_format_for(path));
}

void read_message(const std::filesystem::path& path, google::protobuf::Message* message, ProtoFormat format) {
  const std::string contents = read_file(path);
  switch (format) {
    case ProtoFormat::Binary: from_binary(contents, message, path.string()); return;
    case ProtoFormat::Text: from_text(contents, message, path.string()); return;
    case ProtoFormat::Json: from_json(contents, message, path.string()); return;
  }
  throw std::logic_error("read_message: bad ProtoFormat");
}

void read_message(const std::filesystem::path& path, google::protobuf::Message* message) {
  read_message(path, message, proto_format_for(path));
}

void check_num_ranks(const google::protobuf::Message& message, std::uint32_t num_ranks,
                     const std::filesystem::path& path) {
  const std::string& type = message.GetDescriptor()->name();
  if (num_ranks == 0) {
    std::string kind = type;
    std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
    throw InputError(fmt::format("{}: num_ranks: must be > 0, got 0 (an empty {}: is the file empty, truncated or not "
                                 "a {}?)",
                                 path.string(), kind, type));
  }
  if (num_ranks > limits::kMaxRanks) {
    throw InputError(fmt::format("{}: num_ranks: must be <= {} (the bound of base/input_limits.h), got {}",
                                 path.string(), limits::kMaxRanks, num_ranks));
  }
}

}  // namespace eppsim
