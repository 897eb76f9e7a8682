#pragma once
// Where each field of a scenario came from: the file, the line the parser saw
// it on, and the --set override that gave its value. Resolution code anywhere
// (the scenario's parts in traces/, each planner's options in sim/plan/) reports
// a broken rule through it, so that every error reads the same:
//   "s.textproto:18: plan.epp.sp_degree: must divide ..."
//   "s.textproto: plan.epp.sp_degree: must divide ... (set by --set plan.epp.sp_degree=3)"
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <google/protobuf/text_format.h>

namespace eppsim {

// One --set override as applied: the assignment as given and the dotted path
// of the field it set (trimmed, as the descriptors spell it).
struct ParsedOverride {
  std::string assignment;  // "FIELD=VALUE"
  std::string field;       // "plan.epp.sp_degree"
};

class FieldLocator {
 public:
  using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;

  // `tree` holds the parsed text's field locations (null: no line numbers, as
  // for a scenario built in code); `overrides` in the order they were applied.
  FieldLocator(std::string source, std::shared_ptr<const ParseInfoTree> tree = nullptr,
               std::vector<ParsedOverride> overrides = {})
      : source_(std::move(source)), tree_(std::move(tree)), overrides_(std::move(overrides)) {}

  // The file name (or "<embedded quickstart>") that messages start with.
  const std::string& source() const { return source_; }

  // Throws InputError "file:LINE: path: rule" (LINE of the field, or of its
  // nearest written ancestor), "file: path: rule" when no line is known, or
  // "file: path: rule (set by --set FIELD=VALUE)" when an override set the
  // field or one of its ancestors (the last such override).
  [[noreturn]] void fail(std::string_view path, std::string_view rule) const;

 private:
  // 1-based line of the deepest component of `path` that the parser saw; 0 if none.
  int line_of(std::string_view path) const;

  std::string source_;
  std::shared_ptr<const ParseInfoTree> tree_;
  std::vector<ParsedOverride> overrides_;
};

// "a.b.c" -> {"a", "b", "c"} (an empty component stays empty).
std::vector<std::string_view> split_field_path(std::string_view path);

// A double-quoted string literal, valid both in messages and in text format.
std::string quote_string(std::string_view text);

}  // namespace eppsim
