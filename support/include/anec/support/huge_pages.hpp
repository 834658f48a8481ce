// Advice to the kernel on large memory (madvise). An allocator for a large array read at random (a
// hash table of millions of slots): a block of 2 MiB or more is aligned to 2 MiB and offered to the
// kernel for huge pages, so that a lookup's cache miss is not also a miss of the address
// translation; where the kernel gives no huge pages, the memory is the same, in small pages. And
// populate(): pages made present ahead of the thread that will write them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include <sys/mman.h>
#include <unistd.h>

namespace anec {

template <class T> struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t(2) << 20;

  HugePageAllocator() = default;
  template <class U> HugePageAllocator(const HugePageAllocator<U> &) {}

  T *allocate(size_t n) {
    if (n > (SIZE_MAX - kHugePage) / sizeof(T))
      throw std::bad_array_new_length();
    size_t bytes = n * sizeof(T);
    if (bytes < kHugePage)
      return static_cast<T *>(::operator new(bytes));
    bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void *p = std::aligned_alloc(kHugePage, bytes);
    if (!p)
      throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE); // advice only: refused, the pages are small
    return static_cast<T *>(p);
  }
  void deallocate(T *p, size_t n) {
    if (n * sizeof(T) < kHugePage)
      ::operator delete(p);
    else
      std::free(p);
  }
  template <class U> bool operator==(const HugePageAllocator<U> &) const { return true; }
};

// The pages of [p, p + bytes) made present before their first write, by the kernel in one call
// (MADV_POPULATE_WRITE), so that the thread that fills them later takes no page fault on them. Advice
// only: the contents are untouched, and where the kernel refuses it the writes fault the pages in as
// before.
inline void populate(const void *p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t from = uintptr_t(p) / page * page, to = (uintptr_t(p) + bytes + page - 1) / page * page;
  if (bytes > 0)
    madvise(reinterpret_cast<void *>(from), to - from, MADV_POPULATE_WRITE);
#else
  (void)p, (void)bytes;
#endif
}

} // namespace anec
