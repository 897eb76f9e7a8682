#pragma once
// Strict text-format parsing with errors as "source:line:column: message"
// (1-based), never logged by libprotobuf itself. Shared by read_message, the
// scenario loader and --set overrides.
#include <optional>
#include <string>
#include <string_view>

#include <google/protobuf/text_format.h>

namespace google::protobuf {
class Message;
}

namespace eppsim {

// The first error of a failed parse. `line` and `column` are 1-based; `line`
// is 0 when the error lies past the end of the input (a missing "}").
struct TextParseError {
  int line = 0;
  int column = 0;
  std::string message;  // libprotobuf's own words
};

// Replaces `*message` with the parsed `text`; returns the first error instead
// of throwing. Unknown fields, bad syntax and a singular field given twice are
// errors. With `locations`, the line and column of every parsed field are
// recorded there (0-based, as protobuf keeps them).
std::optional<TextParseError> try_parse_text(std::string_view text, google::protobuf::Message* message,
                                             google::protobuf::TextFormat::ParseInfoTree* locations = nullptr);

// As try_parse_text, throwing InputError "source:line:column: message".
void parse_text_strict(std::string_view text, google::protobuf::Message* message, std::string_view source,
                       google::protobuf::TextFormat::ParseInfoTree* locations = nullptr);

}  // namespace eppsim
