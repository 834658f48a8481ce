// Test helper: an attribute set on an ONNX node the test builds (an integer, a float, a list of
// integers, a string).
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace anec::test {

inline onnx::AttributeProto *new_attribute(onnx::NodeProto *n, const std::string &name,
                                           onnx::AttributeProto_AttributeType type) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
inline void set_integer(onnx::NodeProto *n, const std::string &name, int64_t v) {
  new_attribute(n, name, onnx::AttributeProto_AttributeType_INT)->set_i(v);
}
inline void set_real(onnx::NodeProto *n, const std::string &name, float v) {
  new_attribute(n, name, onnx::AttributeProto_AttributeType_FLOAT)->set_f(v);
}
inline void set_ints(onnx::NodeProto *n, const std::string &name, const std::vector<int64_t> &v) {
  auto *a = new_attribute(n, name, onnx::AttributeProto_AttributeType_INTS);
  for (int64_t x : v)
    a->add_ints(x);
}
inline void set_text(onnx::NodeProto *n, const std::string &name, const std::string &v) {
  new_attribute(n, name, onnx::AttributeProto_AttributeType_STRING)->set_s(v);
}

} // namespace anec::test
