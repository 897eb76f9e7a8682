#pragma once
// Error types shared by every layer. Library code throws; only main() turns
// errors into exit codes (InputError -> 2, anything else -> 1).
#include <stdexcept>
#include <string>

namespace eppsim {

// The system's text for an errno value ("No space left on device"); for 0,
// which the C library calls "Success", "no error reported by the system", so
// that no failure ever reads as a success.
std::string system_error_text(int error);

// Whether an errno value from creating or opening a path the user gave says
// the path is at fault (missing or not a directory on the way, too long, not
// writable, read-only, a directory, a loop of links), so that the error is the
// user's to fix (InputError, exit 2) rather than the machine's (a full disk,
// an I/O error: exit 1).
bool is_path_error(int error);

// Bad input from a user: a scenario, a file, a command-line value. The message
// names the file, the field and the rule, e.g.
// "scenario.textproto:12: cluster.nodes: must be > 0, got 0".
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace eppsim
