#include "base/memory_limit.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/units.h"

namespace eppsim {
namespace {

// 0: not set, the default applies.
std::atomic<std::uint64_t> limit_set_bytes{0};

std::string gib(std::uint64_t bytes) { return format_bytes(Bytes(bytes)); }

}  // namespace

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  std::uint64_t bytes = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  // A container's share: cgroup v2's memory.max ("max" when unlimited).
  if (std::FILE* cgroup = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    unsigned long long max = 0;
    if (std::fscanf(cgroup, "%llu", &max) == 1 && max > 0) bytes = std::min<std::uint64_t>(bytes, max);
    std::fclose(cgroup);
  }
  return bytes;
}

std::optional<std::uint64_t> address_space_limit_bytes() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<std::uint64_t>(limit.rlim_cur);
}

std::uint64_t default_memory_limit_bytes() {
  std::uint64_t limit = physical_memory_bytes() / 100 * 85;
  if (const auto space = address_space_limit_bytes()) limit = std::min(limit, *space / 10 * 9);
  return limit;
}

std::uint64_t held_memory_bytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long long size_pages = 0, resident_pages = 0;
  const int got = std::fscanf(statm, "%llu %llu", &size_pages, &resident_pages);
  std::fclose(statm);
  if (got != 2) return 0;
  const auto pages = address_space_limit_bytes() ? size_pages : resident_pages;
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::uint64_t private_memory_bytes() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::uint64_t total_kib = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("Private_Clean:") || line.starts_with("Private_Dirty:")) {
      total_kib += std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 10);
    }
  }
  return total_kib * 1024;
}

void set_memory_limit_from_option(std::string_view prefix, const std::string& text) {
  Bytes limit;
  try {
    limit = parse_bytes(text);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}--max-memory: {}", prefix, e.what()));
  }
  if (limit.count == 0) throw InputError(fmt::format("{}--max-memory: must be > 0, got '{}'", prefix, text));
  set_memory_limit_bytes(limit.count);
}

void set_memory_limit_bytes(std::uint64_t bytes) { limit_set_bytes = bytes; }

std::uint64_t memory_limit_bytes() {
  const std::uint64_t set = limit_set_bytes;
  return set != 0 ? set : default_memory_limit_bytes();
}

std::string memory_limit_text() {
  if (limit_set_bytes != 0) return fmt::format("{} (--max-memory)", gib(limit_set_bytes));
  const auto space = address_space_limit_bytes();
  const std::uint64_t physical = physical_memory_bytes();
  if (space && *space / 10 * 9 < physical / 100 * 85) {
    return fmt::format("{} (the default, 90% of the address-space limit of {}; --max-memory sets it)",
                       gib(memory_limit_bytes()), gib(*space));
  }
  return fmt::format("{} (the default, 85% of this machine's {}; --max-memory sets it)", gib(memory_limit_bytes()),
                     gib(physical));
}

void check_memory_estimate(std::string_view what, std::uint64_t estimate_bytes, std::string_view remedy) {
  if (estimate_bytes <= memory_limit_bytes()) return;
  throw InputError(fmt::format("{} needs about {}, past the memory limit of {}: {}", what, gib(estimate_bytes),
                               memory_limit_text(), remedy));
}

}  // namespace eppsim
