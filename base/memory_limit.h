#pragma once
// The memory guard: the most memory a run may take (--max-memory), and the
// checks that refuse, with an InputError (exit 2) naming the estimate, the
// limit and what to change, work that would pass it, before the kernel's
// out-of-memory killer ends the process without a word.
//
// The limit defaults to 85% of the machine's physical memory, and never more
// than 90% of the address-space limit the process runs under (ulimit -v:
// virtual memory runs ahead of what is resident).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace eppsim {

// The machine's memory as this process sees it: physical memory, or its
// cgroup's memory.max when that is lower.
std::uint64_t physical_memory_bytes();
// RLIMIT_AS; none when unlimited.
std::optional<std::uint64_t> address_space_limit_bytes();
// As above, for this machine and process.
std::uint64_t default_memory_limit_bytes();
// What the process holds now, as the limit counts it (/proc/self/statm): its
// resident set; under an address-space limit, its virtual size, which that
// limit counts and which runs ahead of the resident set.
std::uint64_t held_memory_bytes();

// The pages only this process maps (/proc/self/smaps_rollup: private clean
// and dirty): what a forked child adds beyond the pages it still shares with
// its parent; 0 when unreadable.
std::uint64_t private_memory_bytes();

// The process's limit: set once by main() from --max-memory, else the default.
void set_memory_limit_bytes(std::uint64_t bytes);
// Sets the limit from --max-memory's text ("16GiB"); InputError
// "PREFIX--max-memory: RULE, got 'TEXT'" for a size that is not one or is 0.
void set_memory_limit_from_option(std::string_view prefix, const std::string& text);
std::uint64_t memory_limit_bytes();
// The limit in words, for messages: "20 GiB (--max-memory)" or "20.4 GiB
// (the default, 85% of this machine's 24 GiB; --max-memory sets it)".
std::string memory_limit_text();

// Throws InputError "WHAT needs about N GiB, past the memory limit of LIMIT:
// REMEDY" when `estimate_bytes` exceeds the limit.
void check_memory_estimate(std::string_view what, std::uint64_t estimate_bytes, std::string_view remedy);

}  // namespace eppsim
