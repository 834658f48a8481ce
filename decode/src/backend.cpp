#include "backend.hpp"

namespace anec::decode::backend {

const Api &api() {
  // Loaded once; a failed load throws and is tried again by the next caller.
  static const Api &table = plugin::load<Api>(kModule, kEntry, kVersion);
  return table;
}

} // namespace anec::decode::backend
