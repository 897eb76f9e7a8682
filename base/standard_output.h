#pragma once
// A program's last word on its standard output: a summary written to a full
// disk (`> /dev/full`) or a closed stdout fails at the flush, and saying
// nothing would report success for output nobody received.
#include <string_view>

namespace eppsim {

// Flushes stdout. When that or an earlier write failed, prints "PROGRAM:
// failure: cannot write to standard output: REASON" on stderr and returns 1
// (or `status`, when already non-zero); else returns `status`.
int flush_standard_output(std::string_view program, int status);

}  // namespace eppsim
