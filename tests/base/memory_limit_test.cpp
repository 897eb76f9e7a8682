#include "base/memory_limit.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

TEST(MemoryLimit, TheDefaultIsAShareOfTheMachinesMemory) {
  EXPECT_GT(physical_memory_bytes(), 0u);
  EXPECT_GT(held_memory_bytes(), 0u);
  EXPECT_LE(default_memory_limit_bytes(), physical_memory_bytes());
  EXPECT_GE(default_memory_limit_bytes(), physical_memory_bytes() / 100 * 85 - 1);
}

TEST(MemoryLimit, AnEstimatePastTheLimitIsRefusedNamingTheEstimateTheLimitAndTheRemedy) {
  set_memory_limit_bytes(std::uint64_t{1} << 30);
  EXPECT_NO_THROW(check_memory_estimate("x", std::uint64_t{1} << 30, "do less"));
  try {
    check_memory_estimate("simulating it", std::uint64_t{3} << 30, "do less");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "simulating it needs about 3 GiB, past the memory limit of 1 GiB (--max-memory): do less");
  }
  set_memory_limit_bytes(0);  // back to the default
  EXPECT_EQ(memory_limit_bytes(), default_memory_limit_bytes());
  EXPECT_THAT(memory_limit_text(), HasSubstr("(the default, "));
}

// Under an address-space limit (ulimit -v) the default is 90% of it.
TEST(MemoryLimit, TheDefaultStaysUnderTheAddressSpaceLimit) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: a 4 GiB limit leaves it none";
#endif
#endif
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = std::uint64_t{4} << 30;
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(3);
    const bool ok = address_space_limit_bytes() == (std::uint64_t{4} << 30) &&
                    default_memory_limit_bytes() <= (std::uint64_t{4} << 30) / 10 * 9;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A forked child's own pages are those it writes after the fork, not the ones it still shares.
TEST(MemoryLimit, PrivateMemoryCountsTheChildsOwnPagesNotItsParents) {
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  std::vector<char> parents(kBytes, 1);  // the parent's, touched
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::uint64_t before = private_memory_bytes();
    std::vector<char> own(kBytes, 2);  // the child's, touched
    const std::uint64_t after = private_memory_bytes();
    const bool ok = before > 0 && before < kBytes / 2 && after >= before + kBytes / 8 * 7 && own[kBytes - 1] == 2;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(parents[0], 1);
}

}  // namespace
}  // namespace eppsim
