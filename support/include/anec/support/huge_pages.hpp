// An allocator for a large array read at random (a hash table of millions of slots): a block of
// 2 MiB or more is aligned to 2 MiB and offered to the kernel for huge pages (madvise), so that a
// lookup's cache miss is not also a miss of the address translation. Where the kernel gives no
// huge pages, the memory is the same, in small pages.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include <sys/mman.h>

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

} // namespace anec
