#pragma once
// UTF-8 validation of user-given text (file contents, names, paths): what
// eppsim reads or writes into its own outputs must be UTF-8, or its outputs
// could not be read back (protobuf strings and JSON are UTF-8).
#include <cstddef>
#include <string_view>

namespace eppsim {

// The byte offset of the first byte of `text` that is not well-formed UTF-8
// (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or
// std::string_view::npos when all of it is.
std::size_t first_invalid_utf8(std::string_view text);

inline bool is_utf8(std::string_view text) { return first_invalid_utf8(text) == std::string_view::npos; }

}  // namespace eppsim
