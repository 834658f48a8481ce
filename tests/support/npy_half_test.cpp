// Halves (half.hpp) and .npy files (npy.hpp) against NumPy (Debian's python3-numpy), the reference
// the evaluator's numerics are checked by: every one of the 65 536 halves widened, float32 values at
// and around every rounding edge (the largest half 65504, overflow at 65520, the subnormals down to
// 2^-24 and the ties below them, signed zeros, infinities, NaN) narrowed, .npy files NumPy writes in
// every dtype, byte order and memory order read, and the files written here read by NumPy.
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/half.hpp"
#include "anec/support/npy.hpp"

#include "../errors.hpp"
#include "../numpy_test.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace anec;
namespace fs = std::filesystem;

namespace {

class Numpy : public test::NumpyTest {
protected:
  Numpy() : NumpyTest("anec-npy") {}
  // Runs a Python script (numpy imported as np, os.chdir'ed into the scratch folder); true on exit 0.
  bool python(const std::string &script) {
    fs::path file = dir_ / "script.py";
    std::ofstream(file) << "import numpy as np, os, sys\nos.chdir(" << dir_ << ")\n" << script << "\n";
    return std::system((std::string(ANEC_TEST_NUMPY_PYTHON) + " " + file.string()).c_str()) == 0;
  }
};

uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

} // namespace

TEST_F(Numpy, EveryHalfWidensAsNumpyWidensIt) {
  ASSERT_TRUE(
      python("np.save('h.npy', np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32))"));
  npy::Array a = load("h.npy");
  ASSERT_EQ(a.dtype, "f4");
  ASSERT_EQ(a.count(), 65536u);
  ASSERT_EQ(a.data.size(), 4 * a.count());
  for (uint32_t h = 0; h < 65536; ++h) {
    float want;
    std::memcpy(&want, a.data.data() + 4 * h, 4);
    float got = from_half(uint16_t(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(bits(got), bits(want)) << h;
      EXPECT_EQ(to_half(got), h) << h; // and back, exactly
    }
  }
}

TEST_F(Numpy, Float32NarrowsAsNumpyNarrowsIt) {
  // Each half's value and the float32 values around it, the midpoints between neighbours (the ties),
  // a little either side of them, and values far outside the range.
  ASSERT_TRUE(python(R"(
h = np.arange(65536, dtype=np.uint16).view(np.float16)
h = h[np.isfinite(h)].astype(np.float64)
h = np.unique(h)
mids = (h[1:] + h[:-1]) / 2
x = np.concatenate([h, mids, np.nextafter(mids.astype(np.float32), np.float32(np.inf)).astype(np.float64),
                    np.nextafter(mids.astype(np.float32), np.float32(-np.inf)).astype(np.float64),
                    [65504, 65519.996, 65520, 65536, 1e30, -1e30, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-26,
                     1e-30, -0.0, np.inf, -np.inf, np.nan]]).astype(np.float32)
np.save('x.npy', x)
np.save('h.npy', x.astype(np.float16).view(np.uint16))
)"));
  npy::Array x = load("x.npy"), h = load("h.npy");
  ASSERT_EQ(x.count(), h.count());
  ASSERT_GT(x.count(), 190000u);
  ASSERT_EQ(x.data.size(), 4 * x.count());
  ASSERT_EQ(h.data.size(), 2 * h.count());
  size_t mismatches = 0;
  for (size_t i = 0; i < x.count(); ++i) {
    float f;
    uint16_t want;
    std::memcpy(&f, x.data.data() + 4 * i, 4);
    std::memcpy(&want, h.data.data() + 2 * i, 2);
    uint16_t got = to_half(f);
    bool same = std::isnan(f) ? (got & 0x7c00) == 0x7c00 && (got & 0x3ff) : got == want;
    if (!same && ++mismatches < 10)
      ADD_FAILURE() << "float32 " << bits(f) << " (" << f << "): numpy " << want << ", anec " << got;
  }
  EXPECT_EQ(mismatches, 0u);
  // the array form (the CPU's conversions where it has them) gives the same values, tail included
  std::vector<float> all(x.count());
  std::memcpy(all.data(), x.data.data(), 4 * all.size());
  std::vector<float> one = all;
  round_to_half(std::span<float>(all));
  for (size_t i = 0; i < all.size(); ++i) {
    float want = round_to_half(one[i]);
    if (std::isnan(want) ? !std::isnan(all[i]) : bits(all[i]) != bits(want))
      ADD_FAILURE() << "array rounding of " << one[i] << ": " << all[i] << ", one at a time " << want;
  }
  EXPECT_EQ(from_half(to_half(65519.99f)), 65504.0f);
  EXPECT_TRUE(std::isinf(round_to_half(65520.0f)));
}

TEST_F(Numpy, ReadsWhatNumpyWritesInEveryDtypeByteOrderAndMemoryOrder) {
  // Each file holds arange(24) in shape (2, 3, 4) (or its flat or scalar forms): element i in C
  // order has the value i, whatever the file's layout.
  ASSERT_TRUE(python(R"(
base = np.arange(24).reshape(2, 3, 4)
for t in ['<f2', '<f4', '<f8', '>f4', '>f8', '|i1', '|u1', '<i2', '>u2', '<i4', '>i8', '<u8']:
    name = t.replace('<', 'le').replace('>', 'be').replace('|', '')
    np.save(name + '.npy', base.astype(t))
    np.save(name + '-fortran.npy', np.asfortranarray(base.astype(t)))
np.save('bool.npy', base % 2 == 1)
np.save('scalar.npy', np.float32(7))
np.save('flat.npy', np.arange(5, dtype=np.int16))
np.save('empty.npy', np.zeros((0, 3), dtype=np.float32))
)"));
  for (const char *name :
       {"lef2", "lef4", "lef8", "bef4", "bef8", "i1", "u1", "lei2", "beu2", "lei4", "bei8", "leu8"})
    for (std::string file : {std::string(name) + ".npy", std::string(name) + "-fortran.npy"}) {
      npy::Array a = load(file);
      ASSERT_EQ(a.shape, (std::vector<int64_t>{2, 3, 4})) << file;
      std::vector<double> v = a.values();
      for (size_t i = 0; i < v.size(); ++i)
        ASSERT_EQ(v[i], double(i)) << file << " element " << i;
    }
  npy::Array b = load("bool.npy");
  EXPECT_EQ(b.dtype, "b1");
  ASSERT_GE(b.values().size(), 5u);
  EXPECT_EQ(b.values()[3], 1.0);
  EXPECT_EQ(b.values()[4], 0.0);
  EXPECT_EQ(load("scalar.npy").shape, std::vector<int64_t>{});
  EXPECT_EQ(load("scalar.npy").values(), std::vector<double>{7});
  EXPECT_EQ(load("flat.npy").values(), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(load("empty.npy").count(), 0u);
}

TEST_F(Numpy, NumpyReadsWhatAnecWrites) {
  npy::Array f16{"f2", {2, 3}, {}}, b1{"b1", {4}, {1, 0, 0, 1}}, scalar{"f4", {}, {}},
      i1{"i1", {3}, {0xff, 0, 7}};
  for (float v : {1.0f, -2.5f, 65504.0f, 0.0f, 6e-8f, -0.0f}) {
    uint16_t h = to_half(v);
    f16.data.push_back(uint8_t(h));
    f16.data.push_back(uint8_t(h >> 8));
  }
  uint32_t seven = bits(7.0f);
  for (int k = 0; k < 4; ++k)
    scalar.data.push_back(uint8_t(seven >> (8 * k)));
  write_output(dir_ / "f16.npy", npy::write(f16));
  write_output(dir_ / "b1.npy", npy::write(b1));
  write_output(dir_ / "scalar.npy", npy::write(scalar));
  write_output(dir_ / "i1.npy", npy::write(i1));
  EXPECT_TRUE(python(R"(
a = np.load('f16.npy')
assert a.dtype == np.float16 and a.shape == (2, 3), (a.dtype, a.shape)
assert a.tolist() == [[1.0, -2.5, 65504.0], [0.0, np.float16(6e-8), -0.0]], a.tolist()
assert np.load('b1.npy').tolist() == [True, False, False, True]
s = np.load('scalar.npy'); assert s.shape == () and s.dtype == np.float32 and s == 7
assert np.load('i1.npy').tolist() == [-1, 0, 7]
)"));
  // And back through the reader.
  EXPECT_EQ(npy::read(npy::write(f16), "f16").values().at(2), 65504.0);
}

TEST(Npy, MalformedFilesAreRefusedWithAReason) {
  npy::Array ok{"f4", {2}, std::vector<uint8_t>(8, 0)};
  std::vector<uint8_t> good = npy::write(ok);
  auto code = [](std::vector<uint8_t> b) { return test::code_of([&] { npy::read(b, "x.npy"); }); };
  EXPECT_EQ(code(good), "none");
  EXPECT_EQ(code({}), "ANEC-NPY-001");
  std::vector<uint8_t> magic = good;
  ASSERT_GT(magic.size(), 1u);
  magic[1] = 'X';
  EXPECT_EQ(code(magic), "ANEC-NPY-001");
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_NE(code(std::vector<uint8_t>(good.begin(), good.begin() + long(n))), "none") << n;
  std::vector<uint8_t> extra = good;
  extra.push_back(0);
  EXPECT_EQ(code(extra), "ANEC-NPY-002");
  npy::Array complex{"c8", {1}, std::vector<uint8_t>(8, 0)};
  EXPECT_EQ(code(npy::write(complex)), "ANEC-NPY-002");
  std::string text(good.begin(), good.end());
  std::string bad_shape = text;
  bad_shape.replace(bad_shape.find("(2,)"), 4, "(x,)");
  EXPECT_EQ(code(std::vector<uint8_t>(bad_shape.begin(), bad_shape.end())), "ANEC-NPY-001");
}
