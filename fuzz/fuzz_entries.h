#pragma once
// What each fuzz target feeds its input through: the same library calls the
// eppsim command makes on such a file. Bad input must end in an InputError,
// which these functions catch and return as the expected outcome; anything
// else (another exception, a crash, a leak, undefined behaviour, a hang) is a
// finding. The libFuzzer targets (fuzz/*_fuzz.cpp) and the regression test
// (tests/fuzz/regression_test.cpp, in every build) share them.
#include <string_view>

namespace eppsim::fuzz {

// `eppsim run FILE`: the scenario's text parsed strictly and resolved in full
// (relative paths in it resolve against an empty folder, so it reads no file
// the fuzzer did not write).
void scenario_input(std::string_view text);
// `eppsim sim SCHEDULE.pb`: a binary Schedule, read strictly and validated.
void schedule_input(std::string_view bytes);
// `eppsim export chrome|timeline TRACE.pb`: the Trace read from a file, then
// turned into a Chrome trace and rank timelines.
void trace_input(std::string_view bytes);
// `eppsim sim PREFIX` for a 1-rank Chakra trace: one rank's ET stream decoded
// and imported as a Schedule (with a GPU for the roofline of unpriced nodes).
void chakra_input(std::string_view bytes);

}  // namespace eppsim::fuzz
