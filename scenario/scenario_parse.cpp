// Strict text, --set overrides and the field locator of a parsed scenario.
#include "scenario/scenario.h"

#include <span>
#include <utility>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include "base/errors.h"
#include "base/proto_io.h"
#include "base/text_parse.h"

namespace eppsim {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::string field_names(const Descriptor* descriptor) {
  std::string names;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    if (!names.empty()) names += ", ";
    names += descriptor->field(i)->name();
  }
  return names;
}

std::string enum_names(const FieldDescriptor* field) {
  std::string names;
  const auto* type = field->enum_type();
  for (int i = 0; i < type->value_count(); ++i) {
    if (!names.empty()) names += ", ";
    names += type->value(i)->name();
  }
  return names;
}

std::string type_name(const FieldDescriptor* field) {
  if (field->is_map()) return "map";
  std::string name = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ? field->message_type()->name()
                     : field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM  ? field->enum_type()->name()
                                                                           : field->type_name();
  return field->is_repeated() ? "repeated " + name : name;
}

bool is_quoted(std::string_view value) {
  return value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front();
}

// True when `message` has nothing set except, at each level, the next field of
// `path` (so a VALUE cannot smuggle in other fields with "} other { ...").
bool only_path_is_set(const Message& message, std::span<const FieldDescriptor* const> path) {
  std::vector<const FieldDescriptor*> set;
  message.GetReflection()->ListFields(message, &set);
  if (!message.GetReflection()->GetUnknownFields(message).empty()) return false;
  for (const FieldDescriptor* field : set) {
    if (field != path.front()) return false;
  }
  if (path.size() == 1 || set.empty()) return true;
  return only_path_is_set(message.GetReflection()->GetMessage(message, path.front()), path.subspan(1));
}

ParsedOverride apply_override_impl(proto::Scenario* scenario, std::string_view assignment) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string_view::npos)
    throw InputError(fmt::format("--set {}: expected FIELD=VALUE, e.g. plan.packed_1f1b.pipeline_stages=4", assignment));
  const std::string_view field_path = trim(assignment.substr(0, equals));
  const std::string_view value = trim(assignment.substr(equals + 1));
  if (field_path.empty()) throw InputError(fmt::format("--set {}: the FIELD before '=' is empty", assignment));

  // Walk the descriptors first: nothing changes unless the whole override is good.
  std::vector<const FieldDescriptor*> path;
  const Descriptor* descriptor = proto::Scenario::descriptor();
  std::string walked;
  const std::vector<std::string_view> parts = split_field_path(field_path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (descriptor == nullptr) {
      const FieldDescriptor* parent = path.back();
      throw InputError(fmt::format("--set {}: {} is a {} field and has no field '{}'", assignment, walked,
                                   type_name(parent), parts[i]));
    }
    const FieldDescriptor* field = parts[i].empty() ? nullptr : descriptor->FindFieldByName(std::string(parts[i]));
    if (field == nullptr) {
      throw InputError(fmt::format("--set {}: {} has no field '{}' (fields: {})", assignment,
                                   walked.empty() ? std::string("the scenario") : walked, parts[i],
                                   field_names(descriptor)));
    }
    if (!walked.empty()) walked += '.';
    walked += field->name();
    path.push_back(field);
    const bool last = i + 1 == parts.size();
    if (!last && field->is_repeated()) {
      throw InputError(fmt::format("--set {}: {} is a {} field; set it whole (--set {}=[...])", assignment, walked,
                                   type_name(field), walked));
    }
    descriptor = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ? field->message_type() : nullptr;
  }
  const FieldDescriptor* leaf = path.back();

  // Text format for "a { b { leaf: VALUE } }"; a bare string gets its quotes.
  std::string literal(value);
  if (leaf->cpp_type() == FieldDescriptor::CPPTYPE_STRING && !leaf->is_repeated() && !is_quoted(value))
    literal = quote_string(value);
  if (leaf->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && value.empty()) literal = "{}";
  std::string snippet;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) snippet += path[i]->name() + " { ";
  snippet += fmt::format("{}: {}", leaf->name(), literal);
  for (std::size_t i = 0; i + 1 < path.size(); ++i) snippet += " }";

  proto::Scenario update;
  if (const auto error = try_parse_text(snippet, &update)) {
    std::string hint;
    if (leaf->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) hint = fmt::format(" (values: {})", enum_names(leaf));
    if (leaf->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !leaf->is_repeated())
      hint = fmt::format(" (a message: VALUE is {{ field: value ... }})");
    throw InputError(fmt::format("--set {}: {} ({}): {}{}", assignment, walked, type_name(leaf), error->message, hint));
  }
  if (!only_path_is_set(update, path))
    throw InputError(fmt::format("--set {}: VALUE must be a single {} value for {}", assignment, type_name(leaf), walked));

  // Replace, not merge: clear the leaf, then merge the update (which holds only it).
  Message* target = scenario;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) target = target->GetReflection()->MutableMessage(target, path[i]);
  target->GetReflection()->ClearField(target, leaf);
  scenario->MergeFrom(update);
  return ParsedOverride{std::string(assignment), walked};
}

}  // namespace

proto::Scenario parse_scenario_text(std::string_view text, std::string_view source) {
  proto::Scenario scenario;
  parse_text_strict(text, &scenario, source);
  return scenario;
}

void apply_override(proto::Scenario* scenario, std::string_view assignment) { apply_override_impl(scenario, assignment); }

ParsedScenario parse_scenario(std::string_view text, const std::string& source, const std::filesystem::path& base_dir,
                              const std::vector<std::string>& overrides) {
  ParsedScenario parsed;
  auto locations = std::make_shared<ParseInfoTree>();
  parse_text_strict(text, &parsed.proto, source, locations.get());
  std::vector<ParsedOverride> applied;
  applied.reserve(overrides.size());
  for (const std::string& assignment : overrides) applied.push_back(apply_override_impl(&parsed.proto, assignment));
  parsed.where = std::make_shared<const FieldLocator>(source, std::move(locations), std::move(applied));
  parsed.base_dir = base_dir;
  return parsed;
}

ParsedScenario parse_scenario_file(const std::filesystem::path& path, const std::vector<std::string>& overrides) {
  const std::string text = read_file(path, limits::kMaxScenarioFileBytes);
  std::filesystem::path base_dir = path.parent_path();
  if (base_dir.empty()) base_dir = ".";
  return parse_scenario(text, path.string(), base_dir, overrides);
}

ParsedScenario parse_embedded_showcase(const std::vector<std::string>& overrides) {
  return parse_scenario(embedded_showcase_text(), "<embedded showcase>", ".", overrides);
}

ParsedScenario parsed_scenario(const proto::Scenario& scenario, std::string_view source,
                               const std::filesystem::path& base_dir) {
  return ParsedScenario{scenario, std::make_shared<const FieldLocator>(std::string(source)), base_dir};
}

}  // namespace eppsim
