// The documents of the firmware commands shared by `anec-fw` and the Python module (python/): a
// command's verdict as `anec-fw validate FILE --format json` prints it.
#pragma once
#include "anec/firmware/wire.hpp"
#include "anec/support/doc.hpp"

namespace anec::tools {

inline Doc validation_doc(const fw::Validation &v, const fw::CommandTable &t) {
  Doc d = Doc::table();
  d.set("accepted", Doc::boolean(v.accepted()));
  d.set("decoded", Doc::boolean(v.decoded));
  d.set("bytes", Doc::integer(v.total_bytes));
  d.set("command", fw::command_to_doc(v.command, t));
  Doc vs = Doc::array();
  for (const fw::Violation &x : v.violations) {
    Doc e = Doc::table();
    e.set("check", Doc::string(x.check));
    e.set("code", Doc::string(x.code));
    e.set("disposition", Doc::string(fw::disposition_name(x.disposition)));
    if (x.status)
      e.set("status", Doc::integer(x.status, true));
    e.set("offset", Doc::integer(int64_t(x.offset)));
    e.set("message", Doc::string(x.message));
    vs.push(std::move(e));
  }
  d.set("violations", std::move(vs));
  return d;
}

} // namespace anec::tools
