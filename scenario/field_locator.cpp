#include "scenario/field_locator.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "base/errors.h"
#include "proto/scenario.pb.h"

namespace eppsim {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// `path` is `prefix` or lies below it ("a.b" covers "a.b" and "a.b.c", not "a.bc").
bool covers(std::string_view prefix, std::string_view path) {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '.');
}

}  // namespace

std::vector<std::string_view> split_field_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t dot = path.find('.', begin);
    parts.push_back(path.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    if (dot == std::string_view::npos) return parts;
    begin = dot + 1;
  }
}

void FieldLocator::fail(std::string_view path, std::string_view rule) const {
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
    if (covers(it->field, path))
      throw InputError(fmt::format("{}: {}: {} (set by --set {})", source_, path, rule, it->assignment));
  }
  if (const int line = line_of(path); line > 0) throw InputError(fmt::format("{}:{}: {}: {}", source_, line, path, rule));
  throw InputError(fmt::format("{}: {}: {}", source_, path, rule));
}

int FieldLocator::line_of(std::string_view path) const {
  const ParseInfoTree* tree = tree_.get();
  const Descriptor* descriptor = proto::Scenario::descriptor();
  int line = 0;
  for (std::string_view name : split_field_path(path)) {
    if (tree == nullptr || descriptor == nullptr) break;
    const FieldDescriptor* field = descriptor->FindFieldByName(std::string(name));
    if (field == nullptr) break;
    const int index = field->is_repeated() ? 0 : -1;
    const auto location = tree->GetLocation(field, index);
    if (location.line < 0) break;
    line = location.line + 1;
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) break;
    tree = tree->GetTreeForNested(field, index);
    descriptor = field->message_type();
  }
  return line;
}

std::string quote_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace eppsim
