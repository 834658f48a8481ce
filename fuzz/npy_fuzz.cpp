// libFuzzer target: arbitrary bytes as a NumPy .npy file; an array that reads must write and read
// back to the same dtype, shape and data, and its values must be computable.
#include "anec/support/error.hpp"
#include "anec/support/npy.hpp"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  anec::npy::Array a;
  try {
    a = anec::npy::read({data, size}, "fuzz.npy");
  } catch (const anec::Error &) {
    return 0;
  }
  anec::npy::Array b = anec::npy::read(anec::npy::write(a), "again.npy");
  if (b.dtype != a.dtype || b.shape != a.shape || b.data != a.data || a.values().size() != a.count())
    std::abort();
  return 0;
}
