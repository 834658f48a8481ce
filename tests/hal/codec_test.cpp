#include "anec/hal/codec.hpp"
#include "anec/hal/target_io.hpp"
#include "anec/support/error.hpp"
#include "anec/support/toml.hpp"
#include "fixture.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include "../errors.hpp"

using namespace anec;
using anec::test::code_of;
using namespace anec::hal;
using test::Tables;

namespace {
const Provenance kBlob{"decoded from test blob", Confidence::Decoded};

uint64_t le(const Bytes &b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(b[off + i]) << (8 * i);
  return v;
}

} // namespace

// blob -> TOML -> blob is byte-identical, and TOML -> blob -> TOML is the identical text, for all 28.
TEST(Codec, RoundTripsEveryTarget) {
  const auto &T = Tables::get();
  ASSERT_EQ(T.registry.targets().size(), 28u);
  for (const Target &t : T.registry.targets()) {
    SCOPED_TRACE(t.name);
    std::string text = to_toml(T.schema, t);
    Bytes blob = encode(T.schema, t);
    ASSERT_EQ(blob.size(), 0x938u);
    Target back = decode(T.schema, blob, t.name, &t, kBlob);
    EXPECT_EQ(to_toml(T.schema, back), text);
    Target reparsed = from_doc(T.schema, toml::parse(text, t.name), t.name);
    EXPECT_EQ(encode(T.schema, reparsed), blob);
    EXPECT_EQ(to_toml(T.schema, reparsed), text);
  }
}

// Decoded facts at their guide offsets (ch.24 tables 24.1 and 24.3), read straight from the bytes.
TEST(Codec, PlacesFieldsAtTheirOffsets) {
  const auto &T = Tables::get();
  Bytes h13 = encode(T.schema, T.registry.get("h13"));
  ASSERT_EQ(h13.size(), 0x938u);
  EXPECT_EQ(h13[0x0], 0x0d);
  EXPECT_EQ(le(h13, 0x238, 8), 4u);
  EXPECT_EQ(le(h13, 0x138, 8), 16384u);
  EXPECT_EQ(le(h13, 0x1b8, 8), 2u << 20);
  EXPECT_EQ(le(h13, 0x668, 8), 3u);
  EXPECT_EQ(h13[0x81d], 0);
  EXPECT_EQ(h13[0x48f], 1);
  // "Simple" as a libc++ short string: length*2, then the characters.
  EXPECT_EQ(h13[0x580], 12);
  EXPECT_EQ(std::memcmp(&h13[0x581], "Simple", 6), 0);
  double eff;
  uint64_t raw = le(h13, 0x7b0, 8);
  std::memcpy(&eff, &raw, 8);
  EXPECT_EQ(eff, 1.0);
  Bytes h18 = encode(T.schema, T.registry.get("h18"));
  ASSERT_EQ(h18.size(), 0x938u);
  EXPECT_EQ(h18[0x52d], 1);
  EXPECT_EQ(h18[0x0], 0x12);
  Bytes h17s = encode(T.schema, T.registry.get("h17s"));
  ASSERT_EQ(h17s.size(), 0x938u);
  EXPECT_EQ(le(h17s, 0x238, 8), 16u);
  EXPECT_EQ(le(h17s, 0x248, 8), 2360u);
}

TEST(Codec, RejectsWrongSizedBlobs) {
  const auto &T = Tables::get();
  const Target &t = T.registry.get("h13");
  Bytes blob = encode(T.schema, t);
  ASSERT_FALSE(blob.empty());
  Bytes shorter(blob.begin(), blob.end() - 1), longer = blob;
  longer.push_back(0);
  EXPECT_EQ(code_of([&] { decode(T.schema, shorter, "h13", &t, kBlob); }), "ANEC-HAL-001");
  EXPECT_EQ(code_of([&] { decode(T.schema, longer, "h13", &t, kBlob); }), "ANEC-HAL-001");
  EXPECT_EQ(code_of([&] { decode(T.schema, Bytes{}, "h13", &t, kBlob); }), "ANEC-HAL-001");
}

TEST(Codec, KeepsUnknownBytesAndMarksChangedValues) {
  const auto &T = Tables::get();
  const Target &t = T.registry.get("h14");
  Bytes blob = encode(T.schema, t);
  ASSERT_EQ(blob.size(), 0x938u);
  blob[0x4] = 0xab;   // inside unk_0x1 (no field names it)
  blob[0x238] = 5;    // num_nes changed
  Target d = decode(T.schema, blob, "h14", &t, kBlob);
  ASSERT_NE(d.find("unk_0x1"), nullptr);
  ASSERT_TRUE(d.find("num_nes") && d.find("max_tensor_width") && t.find("max_tensor_width"));
  EXPECT_EQ(d.find("num_nes")->provenance.source, kBlob.source);
  EXPECT_EQ(d.find("max_tensor_width")->provenance.source, t.find("max_tensor_width")->provenance.source);
  EXPECT_EQ(encode(T.schema, d), blob);
  Target reparsed = from_doc(T.schema, toml::parse(to_toml(T.schema, d), "x"), "x");
  EXPECT_EQ(encode(T.schema, reparsed), blob);
}

TEST(Codec, RejectsValuesThatDoNotFitAndLongStrings) {
  const auto &T = Tables::get();
  Target t = T.registry.get("h13");
  t.values["texture_engine"].value = uint64_t{300};
  EXPECT_EQ(code_of([&] { encode(T.schema, t); }), "ANEC-HAL-004");
  t = T.registry.get("h13");
  t.values["cost_policy_name"].value = std::string(23, 'x');
  EXPECT_EQ(code_of([&] { encode(T.schema, t); }), "ANEC-HAL-004");
  Bytes blob = encode(T.schema, T.registry.get("h13"));
  ASSERT_EQ(blob.size(), 0x938u);
  blob[0x580] |= 1; // long-form string: a heap pointer the blob cannot carry
  EXPECT_EQ(code_of([&] { decode(T.schema, blob, "h13", nullptr, kBlob); }), "ANEC-HAL-002");
  blob = encode(T.schema, T.registry.get("h13"));
  ASSERT_EQ(blob.size(), 0x938u);
  blob[0x590] = 'z'; // a byte past the string would be lost
  EXPECT_EQ(code_of([&] { decode(T.schema, blob, "h13", nullptr, kBlob); }), "ANEC-HAL-002");
}
