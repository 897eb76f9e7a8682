#pragma once
// An allocator for the executor core's per-op tables: a table of 2 MiB or
// more is aligned to 2 MiB and the kernel is asked to back it with
// transparent huge pages (madvise MADV_HUGEPAGE; Debian's kernels enable THP
// for regions that ask). The event loop reads these tables in time order,
// which jumps across ranks: with 4 KiB pages nearly every op read misses the
// TLB, with 2 MiB pages few do. Smaller tables come from the heap as usual.
#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <vector>

namespace eppsim {

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return static_cast<T*>(::operator new(bytes));
    // From the process's allocator (which reuses what the planner freed),
    // aligned so that every 2 MiB of it can be one huge page.
    void* p = ::operator new(rounded(bytes), std::align_val_t{kHugePage});
    madvise(p, rounded(bytes), MADV_HUGEPAGE);  // a hint: without THP the pages stay small, nothing fails
    return static_cast<T*>(p);
  }

  void deallocate(T* p, std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) {
      ::operator delete(p);
    } else {
      ::operator delete(p, std::align_val_t{kHugePage});
    }
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }

 private:
  static std::size_t rounded(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
};

// A table with an entry per op (or per activity, dependency, collective
// member), on huge pages once it is large.
template <typename T>
using OpTable = std::vector<T, HugePageAllocator<T>>;

}  // namespace eppsim
