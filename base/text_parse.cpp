#include "base/text_parse.h"

#include <cstddef>
#include <algorithm>
#include <cctype>
#include <utility>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>

#include "base/errors.h"
#include "base/utf8.h"

namespace eppsim {
namespace {

// Keeps the first error (the parser stops there anyway) and drops warnings:
// nothing reaches stderr.
class FirstErrorCollector final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (error_) return;
    // protobuf counts from 0 and uses line -1 past the end of the input.
    error_ = TextParseError{line < 0 ? 0 : line + 1, line < 0 ? 0 : column + 1, message};
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}

  std::optional<TextParseError>& error() { return error_; }

 private:
  std::optional<TextParseError> error_;
};

// Line `number` (1-based) of `text`, without its newline; nullopt past the end.
std::optional<std::string_view> line_of(std::string_view text, int number) {
  std::size_t begin = 0;
  for (int line = 1; line < number; ++line) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos) return std::nullopt;
    ++begin;
  }
  const std::size_t end = std::min(text.find('\n', begin), text.size());
  return text.substr(begin, end - begin);
}

// protobuf reports an unknown or repeated field at the token after its name
// (the ':' or '{'); move the column back to the name itself, which is where
// people look. Columns count a tab up to the next multiple of 8, as
// protobuf's tokenizer does.
void point_at_field_name(std::string_view text, TextParseError& error) {
  std::string_view name;
  for (const std::string_view marker : {std::string_view("has no field named \""), std::string_view("Non-repeated field \"")}) {
    const std::size_t at = error.message.find(marker);
    if (at == std::string::npos) continue;
    const std::size_t begin = at + marker.size();
    const std::size_t end = error.message.find('"', begin);
    if (end != std::string::npos) name = std::string_view(error.message).substr(begin, end - begin);
    break;
  }
  if (name.empty() || error.line <= 0) return;
  const auto found = line_of(text, error.line);
  if (!found) return;
  const std::string_view line = *found;
  // Byte offset of each column; the last occurrence of the name that starts
  // before the reported column wins.
  std::vector<int> column_of(line.size() + 1, 0);
  int column = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    column_of[i] = column;
    column = line[i] == '\t' ? column + 8 - column % 8 : column + 1;
  }
  column_of[line.size()] = column;
  const int reported = error.column - 1;
  std::size_t best = std::string_view::npos;
  for (std::size_t at = line.find(name); at != std::string_view::npos; at = line.find(name, at + 1)) {
    if (column_of[at] < reported) best = at;
  }
  if (best != std::string_view::npos) error.column = column_of[best] + 1;
}

// The line (1-based) and column (1-based, in bytes) of byte `offset` of `text`.
std::pair<int, int> line_and_column(std::string_view text, std::size_t offset) {
  int line = 1;
  std::size_t line_begin = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') ++line, line_begin = i + 1;
  }
  return {line, static_cast<int>(offset - line_begin) + 1};
}

// protobuf's errors about a value ("Expected integer, got: -", or got: "32"
// for a quoted number) do not name the field: prefix the name that precedes
// the error's column on its line. Errors that name their field ('... field
// "x"', '... field named "x"') are left as they are.
void name_the_field(std::string_view text, TextParseError& error) {
  if (error.line <= 0 || error.message.find("field \"") != std::string::npos ||
      error.message.find("field named \"") != std::string::npos) {
    return;
  }
  const auto line = line_of(text, error.line);
  if (!line) return;
  std::string_view before = line->substr(0, std::min<std::size_t>(line->size(), error.column - 1));
  while (!before.empty() && (before.back() == ' ' || before.back() == '\t' || before.back() == ':')) before.remove_suffix(1);
  std::size_t begin = before.size();
  while (begin > 0 && (std::isalnum(static_cast<unsigned char>(before[begin - 1])) || before[begin - 1] == '_')) --begin;
  if (begin < before.size()) error.message = fmt::format("{}: {}", before.substr(begin), error.message);
}

}  // namespace

std::optional<TextParseError> try_parse_text(std::string_view text, google::protobuf::Message* message,
                                             google::protobuf::TextFormat::ParseInfoTree* locations) {
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return TextParseError{0, 0, fmt::format("text input of {} bytes is too large (at most 2 GiB)", text.size())};
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    const auto [line, column] = line_and_column(text, bad);
    return TextParseError{line, column, "not valid UTF-8 (text-format files are UTF-8 text)"};
  }
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (locations != nullptr) parser.WriteLocationsTo(locations);
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  const bool ok = parser.Parse(&input, message);
  if (errors.error()) {
    point_at_field_name(text, *errors.error());
    name_the_field(text, *errors.error());
    return std::move(errors.error());
  }
  if (!ok) return TextParseError{0, 0, fmt::format("not a valid text-format {} message", message->GetTypeName())};
  return std::nullopt;
}

void parse_text_strict(std::string_view text, google::protobuf::Message* message, std::string_view source,
                       google::protobuf::TextFormat::ParseInfoTree* locations) {
  const std::optional<TextParseError> error = try_parse_text(text, message, locations);
  if (!error) return;
  if (error->line == 0) throw InputError(fmt::format("{}: {}", source, error->message));
  throw InputError(fmt::format("{}:{}:{}: {}", source, error->line, error->column, error->message));
}

}  // namespace eppsim
