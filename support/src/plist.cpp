#include "anec/support/plist.hpp"

#include "anec/support/error.hpp"

#include <cstdlib>
#include <memory>
#include <plist/plist.h>

namespace anec::plist {

namespace {
Doc convert(plist_t node, int depth) {
  if (depth > 64) throw Error("ANEC-PLIST-001", "property list nested deeper than 64 levels");
  switch (plist_get_node_type(node)) {
  case PLIST_DICT: {
    Doc d = Doc::table();
    plist_dict_iter it = nullptr;
    plist_dict_new_iter(node, &it);
    for (;;) {
      char *key = nullptr;
      plist_t value = nullptr;
      plist_dict_next_item(node, it, &key, &value);
      if (!value) {
        std::free(key);
        break;
      }
      std::string k = key ? key : "";
      std::free(key);
      d.set(k, convert(value, depth + 1));
    }
    std::free(it);
    return d;
  }
  case PLIST_ARRAY: {
    Doc a = Doc::array();
    for (uint32_t i = 0; i < plist_array_get_size(node); ++i) a.push(convert(plist_array_get_item(node, i), depth + 1));
    return a;
  }
  case PLIST_BOOLEAN: {
    uint8_t b = 0;
    plist_get_bool_val(node, &b);
    return Doc::boolean(b != 0);
  }
  case PLIST_UINT: {
    uint64_t v = 0;
    plist_get_uint_val(node, &v);
    return Doc::integer(int64_t(v));
  }
  case PLIST_REAL: {
    double v = 0;
    plist_get_real_val(node, &v);
    return Doc::number(v);
  }
  case PLIST_STRING: { // by pointer and length: plist_get_string_val asserts on an embedded NUL
    uint64_t n = 0;
    const char *s = plist_get_string_ptr(node, &n);
    return Doc::string(s ? std::string(s, size_t(n)) : std::string());
  }
  case PLIST_DATA: {
    uint64_t n = 0;
    const char *d = plist_get_data_ptr(node, &n);
    return Doc::string(d ? std::string(d, size_t(n)) : std::string());
  }
  default:
    return Doc::string("");
  }
}
} // namespace

Doc parse(std::string_view bytes, const std::string &source) {
  if (bytes.size() > 0xffffffffu) throw Error("ANEC-PLIST-001", source + ": too large for a property list");
  plist_t root = nullptr;
  plist_from_memory(bytes.data(), uint32_t(bytes.size()), &root);
  if (!root) throw Error("ANEC-PLIST-001", source + ": not a property list (neither XML nor binary plist)");
  std::unique_ptr<void, void (*)(plist_t)> guard(root, plist_free);
  return convert(root, 0);
}

} // namespace anec::plist
