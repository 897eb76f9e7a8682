#include "traces/chakra/chakra_attributes.h"

#include <fmt/format.h>

#include "base/errors.h"

namespace eppsim {
namespace {

using chakra::AttributeProto;

[[noreturn]] void wrong_type(const AttributeProto& a, std::string_view wanted, std::string_view where) {
  throw InputError(fmt::format("{}: attribute {}: expected {}, got value field {}", where, a.name(), wanted,
                               static_cast<int>(a.value_case())));
}

// Any integer form as an int64; `overflow` when an unsigned value exceeds INT64_MAX.
std::optional<std::int64_t> as_signed(const AttributeProto& a, bool& overflow) {
  overflow = false;
  switch (a.value_case()) {
    case AttributeProto::kInt32Val: return a.int32_val();
    case AttributeProto::kInt64Val: return a.int64_val();
    case AttributeProto::kSint32Val: return a.sint32_val();
    case AttributeProto::kSint64Val: return a.sint64_val();
    case AttributeProto::kSfixed32Val: return a.sfixed32_val();
    case AttributeProto::kSfixed64Val: return a.sfixed64_val();
    case AttributeProto::kUint32Val: return static_cast<std::int64_t>(a.uint32_val());
    case AttributeProto::kFixed32Val: return static_cast<std::int64_t>(a.fixed32_val());
    case AttributeProto::kUint64Val:
      overflow = a.uint64_val() > static_cast<std::uint64_t>(INT64_MAX);
      return static_cast<std::int64_t>(a.uint64_val());
    case AttributeProto::kFixed64Val:
      overflow = a.fixed64_val() > static_cast<std::uint64_t>(INT64_MAX);
      return static_cast<std::int64_t>(a.fixed64_val());
    default: return std::nullopt;
  }
}

}  // namespace

const AttributeProto* find_attribute(const ChakraAttributes& attrs, std::string_view name) {
  for (const auto& a : attrs) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::optional<std::uint64_t> unsigned_attribute(const ChakraAttributes& attrs, std::string_view name, std::string_view where) {
  const auto* a = find_attribute(attrs, name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() == AttributeProto::kUint64Val) return a->uint64_val();
  if (a->value_case() == AttributeProto::kFixed64Val) return a->fixed64_val();
  bool overflow = false;
  const auto v = as_signed(*a, overflow);
  if (!v) wrong_type(*a, "an integer", where);
  if (*v < 0) throw InputError(fmt::format("{}: attribute {}: must be >= 0, got {}", where, name, *v));
  return static_cast<std::uint64_t>(*v);
}

std::optional<std::int64_t> signed_attribute(const ChakraAttributes& attrs, std::string_view name, std::string_view where) {
  const auto* a = find_attribute(attrs, name);
  if (a == nullptr) return std::nullopt;
  bool overflow = false;
  const auto v = as_signed(*a, overflow);
  if (!v) wrong_type(*a, "an integer", where);
  if (overflow) throw InputError(fmt::format("{}: attribute {}: does not fit a 64-bit signed integer", where, name));
  return v;
}

std::optional<std::string> string_attribute(const ChakraAttributes& attrs, std::string_view name, std::string_view where) {
  const auto* a = find_attribute(attrs, name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() != AttributeProto::kStringVal) wrong_type(*a, "a string (string_val)", where);
  return a->string_val();
}

std::optional<std::string> bytes_attribute(const ChakraAttributes& attrs, std::string_view name, std::string_view where) {
  const auto* a = find_attribute(attrs, name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() != AttributeProto::kBytesVal) wrong_type(*a, "bytes (bytes_val)", where);
  return a->bytes_val();
}

std::optional<std::vector<std::string>> string_list_attribute(const ChakraAttributes& attrs, std::string_view name,
                                                              std::string_view where) {
  const auto* a = find_attribute(attrs, name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() != AttributeProto::kStringList) wrong_type(*a, "a string list (string_list)", where);
  return std::vector<std::string>(a->string_list().values().begin(), a->string_list().values().end());
}

std::optional<std::vector<std::uint64_t>> unsigned_list_attribute(const ChakraAttributes& attrs, std::string_view name,
                                                                  std::string_view where) {
  const auto* a = find_attribute(attrs, name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() != AttributeProto::kUint64List) wrong_type(*a, "an unsigned list (uint64_list)", where);
  return std::vector<std::uint64_t>(a->uint64_list().values().begin(), a->uint64_list().values().end());
}

namespace {
AttributeProto* add_named(ChakraAttributes* attrs, std::string_view name) {
  auto* a = attrs->Add();
  a->set_name(std::string(name));
  return a;
}
}  // namespace

void add_int64_attribute(ChakraAttributes* attrs, std::string_view name, std::int64_t value) {
  add_named(attrs, name)->set_int64_val(value);
}
void add_int32_attribute(ChakraAttributes* attrs, std::string_view name, std::int32_t value) {
  add_named(attrs, name)->set_int32_val(value);
}
void add_uint64_attribute(ChakraAttributes* attrs, std::string_view name, std::uint64_t value) {
  add_named(attrs, name)->set_uint64_val(value);
}
void add_bool_attribute(ChakraAttributes* attrs, std::string_view name, bool value) {
  add_named(attrs, name)->set_bool_val(value);
}
void add_string_attribute(ChakraAttributes* attrs, std::string_view name, std::string_view value) {
  add_named(attrs, name)->set_string_val(std::string(value));
}
void add_bytes_attribute(ChakraAttributes* attrs, std::string_view name, std::string_view value) {
  add_named(attrs, name)->set_bytes_val(std::string(value));
}
void add_string_list_attribute(ChakraAttributes* attrs, std::string_view name, const std::vector<std::string>& values) {
  auto* list = add_named(attrs, name)->mutable_string_list();
  for (const auto& v : values) list->add_values(v);
}
void add_uint64_list_attribute(ChakraAttributes* attrs, std::string_view name, const std::vector<std::uint64_t>& values) {
  auto* list = add_named(attrs, name)->mutable_uint64_list();
  for (auto v : values) list->add_values(v);
}

}  // namespace eppsim
