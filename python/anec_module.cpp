// The Python module `_anec` (re-exported by the package python/anec): thin bindings over the
// libraries, giving what the command-line tools give. check, estimate and place return the documents
// `anec ... --format json` prints (anec/compiler/pipeline/documents.hpp), as Python objects; eval returns
// NumPy arrays. A descriptor program is the document `anec-desc dump --format json` prints and encodes back
// as `anec-desc encode` does (anec/descriptors/program.hpp); a firmware command is encoded, decoded and
// validated as `anec-fw` does (anec/firmware/wire.hpp). Every anec::Error becomes anec.Error carrying its
// reason code.
#include "anec/compiler/check/check.hpp"
#include "anec/compiler/cost/calibration.hpp"
#include "anec/compiler/cost/cost.hpp"
#include "anec/compiler/eval/eval.hpp"
#include "anec/compiler/frontends/load.hpp"
#include "anec/compiler/passes/place.hpp"
#include "anec/descriptors/program.hpp"
#include "anec/firmware/commands.hpp"
#include "anec/firmware/wire.hpp"
#include "anec/hal/registry.hpp"
#include "anec/hal/schema.hpp"
#include "anec/hal/target.hpp"
#include "anec/support/document.hpp"
#include "anec/support/error.hpp"
#include "anec/support/file.hpp"
#include "anec/support/format.hpp"
#include "anec/support/half.hpp"
#include "anec/support/json.hpp"

#include "anec/compiler/pipeline/context.hpp"
#include "anec/compiler/pipeline/documents.hpp"
#include "anec/support/tables_path.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace anec::python {
namespace {

// The tables and what is read from them (anec/compiler/pipeline/context.hpp, as the anec tool reads them),
// loaded on first use and again when the tables folder changes (set_tables, $ANEC_TABLES). Held by
// shared_ptr: a Target object keeps the schema it was read with.
using Session = compiler::ModelContext;

// What the descriptor and firmware functions read from the tables: the register databases (each
// loaded when first needed) and the firmware command table.
struct ProgramTables {
  std::filesystem::path tables;
  desc::Databases databases;
  std::optional<fw::CommandTable> commands;

  explicit ProgramTables(const fs::path &t)
      : tables(t),
        databases(t, [t](uint32_t subtype) { return hal::generation_of_subtype(t / "targets", subtype); }) {}
  const fw::CommandTable &command_table() {
    if (!commands)
      commands = fw::CommandTable::load(tables / "schema" / "firmware" / "commands.toml");
    return *commands;
  }
};

// The module's state: the folder set_tables() chose, the tables the package carries or was installed
// with (a wheel's tables/ folder, an installed package's <datadir>/anec/tables) and what was read
// from the folder last used. Without set_tables the tables are $ANEC_TABLES, else the package's,
// else the source tree's, else the install prefix's.
struct State {
  std::string tables_option;
  std::string packaged;
  std::shared_ptr<Session> session;
  std::shared_ptr<ProgramTables> program_tables;
};

State &state() {
  static State s;
  return s;
}

fs::path tables_dir() {
  const State &s = state();
  const char *env = std::getenv("ANEC_TABLES");
  bool chosen = !s.tables_option.empty() || (env && *env);
  return use_tables(chosen || s.packaged.empty() ? s.tables_option : s.packaged);
}

std::shared_ptr<Session> session() {
  State &s = state();
  fs::path tables = tables_dir();
  if (!s.session || s.session->tables != tables)
    s.session = std::make_shared<Session>(tables);
  return s.session;
}

std::shared_ptr<ProgramTables> program_tables() {
  State &s = state();
  fs::path tables = tables_dir();
  if (!s.program_tables || s.program_tables->tables != tables)
    s.program_tables = std::make_shared<ProgramTables>(tables);
  return s.program_tables;
}

// A document as Python objects: through its JSON text, so that the module gives exactly what
// `--format json` prints. The text is written by render (JsonPrinter), which needs no GIL.
py::object from_json(const std::string &text) {
  return py::module_::import("json").attr("loads")(text);
}
py::object python_document(std::string_view schema, const PrintFn &print) {
  return from_json(render(Form::Json, schema, print));
}

// A Python object (a dict of the documents the tools read) as a document: through its JSON text.
Doc from_python(const py::object &o, const std::string &source) {
  std::string text = py::str(py::module_::import("json").attr("dumps")(o));
  return json::parse(text, source);
}

bool is_buffer(const py::object &o) {
  return py::isinstance<py::bytes>(o) || py::isinstance<py::bytearray>(o) ||
         py::isinstance<py::memoryview>(o);
}

// The bytes of a buffer (bytes, bytearray, memoryview), in one contiguous copy whatever the buffer's
// layout (a memoryview may be strided).
py::bytes bytes_of(const py::object &o) {
  auto copy = py::reinterpret_steal<py::bytes>(PyBytes_FromObject(o.ptr()));
  if (!copy)
    throw py::error_already_set();
  return copy;
}

std::span<const uint8_t> span_of(const py::bytes &b) {
  std::string_view v(b);
  return {reinterpret_cast<const uint8_t *>(v.data()), v.size()};
}

// A file given as its bytes or its path, read as the tools read it (the same size cap and reasons).
struct Input {
  std::optional<InputFile> file;
  py::bytes copy;
  std::span<const uint8_t> bytes;
  std::string name;
};

Input input_of(const py::object &o, uint64_t max_bytes, const char *what) {
  Input in;
  if (is_buffer(o)) {
    in.copy = bytes_of(o);
    in.bytes = span_of(in.copy);
    in.name = "<bytes>";
    return in;
  }
  fs::path path;
  try {
    path = py::cast<fs::path>(o);
  } catch (const py::cast_error &) {
    throw py::type_error(std::string(what) + " is a path or bytes, not " +
                         std::string(py::str(py::type::of(o).attr("__name__"))));
  }
  in.file = InputFile::open(path, max_bytes);
  in.bytes = in.file->bytes();
  in.name = path.string();
  return in;
}

// A descriptor program: the document `anec-desc dump --format json` prints and the warnings
// `anec-desc` prints on stderr (without its "anec-desc: warning: " prefix).
py::tuple load_program(const py::object &program, std::optional<int> generation) {
  if (generation && (*generation < 0 || *generation > 255))
    throw py::value_error("generation " + std::to_string(*generation) + " is not from 0 to 255");
  auto t = program_tables();
  Input in = input_of(program, 256ull << 20, "a program");
  std::vector<std::string> warnings;
  std::string dump;
  {
    py::gil_scoped_release nogil; // the databases load under their own lock; threads decode on every core
    auto warn = [&](const std::string &w) { warnings.push_back(w); };
    desc::DescProgram p =
        desc::read_program(t->databases, in.bytes, generation.value_or(-1), desc::RawChain::Tree, warn);
    dump = render(Form::Json, "anec-desc.dump", [&](Printer &printer) { desc::print(printer, p); });
  }
  py::list warned;
  for (const std::string &w : warnings)
    warned.append(w);
  return py::make_tuple(from_json(dump), warned);
}

py::bytes encode_program(const py::object &dump) {
  auto bytes = desc::encode_program(program_tables()->tables, from_python(dump, "<program>"), "<program>");
  return py::bytes(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

// Firmware commands as `anec-fw encode`, `decode` and `validate` take them.
py::bytes fw_encode(const py::object &command) {
  auto tables = program_tables(); // held: reading the argument may run Python code (set_tables)
  const fw::CommandTable &t = tables->command_table();
  auto bytes = fw::encode(
      fw::command_from_doc(document_body(from_python(command, "<command>"), "anec-fw.command", "<command>"),
                           t, "<command>"),
      t);
  return py::bytes(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

fw::Channel channel_of(const std::string &channel) {
  if (channel != "ring" && channel != "exeloop")
    throw py::value_error("channel '" + excerpt(channel) + "' is not one of ring, exeloop");
  return channel == "exeloop" ? fw::Channel::ExeLoop : fw::Channel::Ring;
}

py::object fw_validate(const py::object &data, const std::string &channel) {
  fw::Channel on = channel_of(channel);
  auto tables = program_tables(); // held: reading the argument may run Python code (set_tables)
  const fw::CommandTable &t = tables->command_table();
  Input in = input_of(data, 1ull << 24, "a command");
  return python_document("anec-fw.validate",
                         [&](Printer &p) { fw::print(p, fw::validate(in.bytes, t, on), t); });
}

py::object fw_decode(const py::object &data) {
  auto tables = program_tables(); // held: reading the argument may run Python code (set_tables)
  const fw::CommandTable &t = tables->command_table();
  Input in = input_of(data, 1ull << 24, "a command");
  fw::Validation v = fw::validate(in.bytes, t);
  if (!v.decoded) {
    std::string why =
        v.violations.empty() ? "" : v.violations.front().code + ": " + v.violations.front().message;
    throw Error("ANEC-FW-020", in.name + ": cannot be decoded (" + why + ")");
  }
  return python_document("anec-fw.command", [&](Printer &p) { fw::print(p, v.command, t); });
}

// Symbolic dimensions bound by name ("batch") or by input and axis ("x:1"), as `anec --dim` binds them.
using Dims = std::optional<std::map<std::string, int64_t>>;

compiler::DimBindings dim_bindings(const Dims &dims) {
  compiler::DimBindings out;
  if (!dims)
    return out;
  for (const auto &[name, value] : *dims) {
    // The cap of every model reader, so that a bound dimension cannot overflow the shape arithmetic.
    if (name.empty() || value < 1 || value > compiler::kMaxDimension)
      throw py::value_error("dims['" + excerpt(name) + "'] = " + std::to_string(value) +
                            ": a dimension is bound to a value from 1 to 2^40");
    out[name] = value;
  }
  return out;
}

compiler::Gemm gemm_of(const std::string &g) {
  if (g != "reference" && g != "openblas")
    throw py::value_error("gemm '" + excerpt(g) + "' is not one of reference, openblas");
  return g == "openblas" ? compiler::Gemm::openblas : compiler::Gemm::reference;
}

compiler::Precision precision_of(const std::string &p) {
  if (p != "fp32" && p != "fp16")
    throw py::value_error("precision '" + excerpt(p) + "' is not one of fp32, fp16");
  return p == "fp16" ? compiler::Precision::fp16 : compiler::Precision::fp32;
}

// The top-level field numbers of a protobuf message (at most `cap` fields; stops at the first key or
// length that does not parse).
std::vector<uint64_t> top_fields(std::string_view b, size_t cap = 64) {
  std::vector<uint64_t> out;
  size_t i = 0;
  auto varint = [&](uint64_t &v) {
    v = 0;
    for (int shift = 0; shift < 64 && i < b.size(); shift += 7) {
      auto c = static_cast<unsigned char>(b[i++]);
      v |= uint64_t(c & 0x7f) << shift;
      if (!(c & 0x80))
        return true;
    }
    return false;
  };
  while (i < b.size() && out.size() < cap) {
    uint64_t key = 0, n = 0;
    if (!varint(key) || key >> 3 == 0)
      break;
    out.push_back(key >> 3);
    switch (key & 7) {
    case 0:
      if (!varint(n))
        return out;
      break;
    case 1:
      i += 8;
      break;
    case 5:
      i += 4;
      break;
    case 2:
      if (!varint(n) || n > b.size() - std::min(i, b.size()))
        return out;
      i += size_t(n);
      break;
    default:
      return out;
    }
  }
  return out;
}

// The front-end of a model given as bytes, by its first bytes: an anec-graph document opens with '{',
// a network plist with "bplist" or XML's '<', a MIL program with `program(` (after comments); a
// protobuf is a Core ML model when a top-level field is 200 or above (the model kinds of Model.proto)
// and ONNX otherwise (ModelProto's fields are below 30; both open with field 1, a version).
std::string_view format_of(std::string_view bytes) {
  size_t first = bytes.find_first_not_of(" \t\r\n");
  std::string_view head = first == std::string_view::npos ? std::string_view() : bytes.substr(first);
  while (head.starts_with("//")) { // MIL comments
    size_t eol = head.find('\n');
    head = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 1);
    size_t k = head.find_first_not_of(" \t\r\n");
    head = k == std::string_view::npos ? std::string_view() : head.substr(k);
  }
  if (head.starts_with("{"))
    return "json";
  if (head.starts_with("bplist") || head.starts_with("<"))
    return "plist";
  if (head.starts_with("program"))
    return "mil";
  for (uint64_t f : top_fields(bytes))
    if (f >= 200)
      return "coreml";
  return "onnx";
}

// A model as Python gives it: a path (str or os.PathLike; a .mlpackage or .mlmodelc bundle is one
// model), its bytes (bytes, bytearray, memoryview: an anec-graph JSON document, a network plist, MIL
// text, a Core ML .mlmodel or an ONNX model, told apart by their first bytes; MIL and Core ML weights
// in BLOBFILEs are then sized from their types) or an object that serializes itself to ONNX bytes
// (onnx.ModelProto). Taken with the GIL held, so that it is read (load) without it: the bytes are
// held, and viewed, here.
struct ModelInput {
  fs::path path; // empty for bytes
  py::bytes held;
  std::string_view bytes;
  std::string format, source;
};

ModelInput model_input(const py::object &model) {
  ModelInput in;
  if (py::hasattr(model, "SerializeToString")) {
    in.held = model.attr("SerializeToString")();
    in.format = "onnx", in.source = "<onnx.ModelProto>";
  } else if (is_buffer(model)) {
    in.held = bytes_of(model);
    in.source = "<bytes>";
  } else {
    try {
      in.path = py::cast<fs::path>(model);
    } catch (const py::cast_error &) {
      throw py::type_error("a model is a path, bytes or an onnx.ModelProto, not " +
                           std::string(py::str(py::type::of(model).attr("__name__"))));
    }
    return in;
  }
  in.bytes = std::string_view(in.held);
  if (in.format.empty())
    in.format = format_of(in.bytes);
  return in;
}

// The model's graph, read without touching Python (the GIL may be released) under the budget
// `max_memory` (ANEC-MEM-001). A model from bytes has its relative files in the current folder.
compiler::Graph load(const Session &s, const ModelInput &in, const compiler::DimBindings &dims,
                     bool keep_values, uint64_t max_memory) {
  if (in.path.empty())
    return compiler::read_model(in.bytes, in.format, in.source, s.catalog, dims, keep_values,
                                double(max_memory));
  return compiler::load_model(in.path, s.catalog, dims, keep_values, double(max_memory));
}

// Python objects made of documents written as JSON without the GIL.
py::list python_documents(const std::vector<std::string> &docs) {
  py::list out;
  for (const std::string &d : docs)
    out.append(from_json(d));
  return out;
}

// The documents of one target, or for "all" the list of every target's.
py::object one_or_all(const py::list &documents, const std::string &target) {
  return target == "all" ? py::object(documents) : py::object(documents[0]);
}

// The model read, checked and placed on the targets, as `anec check` and `place` do (the placement
// on the analytic estimate: only `estimate` calibrates). The arguments are taken with the GIL held;
// `documents` runs without it, so that threads check models on every core.
struct Placed {
  compiler::Graph g;
  std::vector<const hal::Target *> targets;
  std::vector<compiler::CheckResult> checks;
  std::vector<compiler::Placement> placements;
};

std::vector<std::string>
placed_documents(const py::object &model, const std::string &target, const Dims &dims, uint64_t max_memory,
                 const std::function<std::string(const Placed &, size_t)> &document_of) {
  auto s = session();
  std::string chip;
  auto targets = s->targets(target, &chip); // its tables loaded here, with the GIL held
  ModelInput in = model_input(model);
  compiler::DimBindings bindings = dim_bindings(dims);
  py::gil_scoped_release nogil;
  Placed p{load(*s, in, bindings, false, max_memory), targets, {}, {}};
  p.checks = compiler::check(p.g, s->catalog, targets);
  std::vector<compiler::Estimate> es = compiler::estimate(p.g, s->catalog, targets, nullptr, chip);
  p.placements = s->place(p.g, targets, p.checks, es);
  std::vector<std::string> docs;
  for (size_t i = 0; i < targets.size(); ++i)
    docs.push_back(document_of(p, i));
  return docs;
}

// What `anec check MODEL --target T --format json` prints; for "all", one document per target.
py::object check(const py::object &model, const std::string &target, const Dims &dims, uint64_t max_memory) {
  auto document = [](const Placed &p, size_t i) {
    return render(Form::Json, "anec.check", [&](Printer &printer) {
      compiler::print(printer, p.g, p.checks[i], *p.targets[i]);
      Object placement(printer, "placement");
      compiler::print(printer, p.g, p.placements[i]);
    });
  };
  return one_or_all(python_documents(placed_documents(model, target, dims, max_memory, document)), target);
}

py::object estimate(const py::object &model, const std::string &target, const Dims &dims,
                    const std::string &cost_model, const std::optional<fs::path> &calibration_file,
                    uint64_t max_memory) {
  if (cost_model != "calibrated" && cost_model != "analytic")
    throw py::value_error("cost_model '" + excerpt(cost_model) + "' is not one of calibrated, analytic");
  auto s = session();
  std::string chip;
  auto targets = s->targets(target, &chip);
  ModelInput in = model_input(model);
  compiler::DimBindings bindings = dim_bindings(dims);
  std::vector<std::string> docs;
  {
    py::gil_scoped_release nogil;
    std::optional<compiler::Calibration> calibration;
    if (cost_model == "calibrated")
      calibration = s->calibration(calibration_file ? calibration_file->string() : "");
    compiler::Graph g = load(*s, in, bindings, false, max_memory);
    for (const compiler::Estimate &e :
         compiler::estimate(g, s->catalog, targets, calibration ? &*calibration : nullptr, chip))
      docs.push_back(render(Form::Json, "anec.estimate", [&](Printer &p) { compiler::print(p, g, e); }));
  }
  return one_or_all(python_documents(docs), target);
}

py::object place(const py::object &model, const std::string &target, const Dims &dims, uint64_t max_memory) {
  auto document = [](const Placed &p, size_t i) {
    return render(Form::Json, "anec.place",
                  [&](Printer &printer) { compiler::print(printer, p.g, p.placements[i]); });
  };
  return one_or_all(python_documents(placed_documents(model, target, dims, max_memory, document)), target);
}

// An output as an array: float32, or float16 in fp16 mode; [N, C, H, W] when its depth is 1, as
// `anec eval -o` writes it.
py::array output_array(const compiler::Values &v, compiler::Precision precision) {
  std::vector<py::ssize_t> shape(v.d.begin(), v.d.end());
  if (shape[1] == 1)
    shape.erase(shape.begin() + 1);
  if (precision == compiler::Precision::fp32) {
    py::array_t<float> a(shape);
    std::memcpy(a.mutable_data(), v.v.data(), v.v.size() * sizeof(float));
    return a;
  }
  py::array a(py::dtype("float16"), shape);
  auto *out = static_cast<uint16_t *>(a.mutable_data());
  for (size_t i = 0; i < v.v.size(); ++i)
    out[i] = to_half(v.v[i]);
  return a;
}

// The outputs computed, by name, and the document `anec eval --format json` prints.
py::tuple eval(const py::object &model, const std::optional<std::map<std::string, py::object>> &inputs,
               const std::string &precision, uint64_t seed, const Dims &dims, const std::string &gemm,
               uint64_t max_memory) {
  auto s = session();
  compiler::EvalOptions options;
  options.precision = precision_of(precision);
  options.gemm = gemm_of(gemm);
  options.seed = seed;
  options.max_bytes = double(max_memory);
  for (const auto &[name, value] : inputs ? *inputs : std::map<std::string, py::object>{}) {
    // Any array-like of numbers, read as float32 in C order; the evaluator checks its element count.
    auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(value);
    if (!a)
      throw py::type_error("inputs['" + excerpt(name) + "'] is not an array of numbers");
    compiler::Values v;
    v.d = {1, 1, 1, 1, int64_t(a.size())};
    v.v.assign(a.data(), a.data() + a.size());
    options.inputs.emplace(name, std::move(v));
  }
  ModelInput in = model_input(model);
  compiler::DimBindings bindings = dim_bindings(dims);
  options.base = in.path.parent_path();
  std::optional<compiler::Graph> g;
  std::optional<compiler::EvalResult> r;
  std::string report;
  {
    py::gil_scoped_release nogil; // the inputs are copied; threads evaluate on every core
    g = load(*s, in, bindings, true, max_memory);
    for (const std::string &name : g->outputs) // the NumPy arrays made of the outputs
      options.reserved_bytes += (options.precision == compiler::Precision::fp16 ? 2.0 : 4.0) *
                                double(g->tensor(name)->shape.elements());
    r = compiler::evaluate(*g, s->catalog, compiler::Numerics::load(s->tables / "schema" / "numerics.toml"),
                           options);
    report = render(Form::Json, "anec.eval", [&](Printer &p) { compiler::print(p, *g, *r, options); });
  }
  py::dict out;
  for (const auto &[name, v] : r->outputs)
    out[py::str(name)] = output_array(v, options.precision);
  return py::make_tuple(out, from_json(report));
}

// A target as Python sees it: the fields as typed attributes, their provenance on request.
struct PyTarget {
  hal::Target target;
  std::shared_ptr<Session> session; // for the schema's description of each field

  const hal::Entry &entry(const std::string &field) const {
    if (const hal::Entry *e = target.find(field))
      return *e;
    throw py::attribute_error("target " + target.name + " has no field '" + field + "'");
  }
};

py::object value_of(const hal::Value &v) {
  return std::visit(
      [](const auto &x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, hal::Bytes>)
          return py::bytes(reinterpret_cast<const char *>(x.data()), x.size());
        else
          return py::cast(x);
      },
      v);
}

void translate_errors(py::module_ &m) {
  // The class is made once per interpreter and lives as long as the module: a plain handle, kept.
  static py::handle error_type = py::exception<Error>(m, "Error", PyExc_Exception).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const Error &e) {
      std::string what = e.what();
      std::string message = what.rfind(e.code() + ": ", 0) == 0 ? what.substr(e.code().size() + 2) : what;
      py::object error = py::reinterpret_borrow<py::object>(error_type)(what);
      error.attr("code") = e.code();
      error.attr("message") = message;
      PyErr_SetObject(error_type.ptr(), error.ptr());
    }
  });
}

} // namespace
} // namespace anec::python

PYBIND11_MODULE(_anec, m) {
  using namespace anec::python;
  namespace hal = anec::hal;
  m.doc() = "Bindings over the anec libraries; use the package `anec`, which documents them.";
  translate_errors(m);

  m.def(
      "set_tables", [](const std::optional<std::string> &path) { state().tables_option = path.value_or(""); },
      py::arg("path"), "Use the tables in PATH (None: $ANEC_TABLES, else the built-in folder).");
  m.def(
      "tables", [] { return tables_dir(); }, "The tables folder in use.");
  m.def(
      "_set_packaged_tables", [](const std::string &path) { state().packaged = path; }, py::arg("path"),
      "The tables a wheel carries: the default unless set_tables or $ANEC_TABLES says otherwise.");
  m.def(
      "targets",
      [] {
        std::vector<std::string> names;
        for (const hal::Target &t : session()->registry().targets())
          names.push_back(t.name);
        return names;
      },
      "The canonical names of the targets, in line-up order.");

  py::class_<hal::Provenance>(m, "Provenance", "Where a value comes from and how sure it is.")
      .def_readonly("source", &hal::Provenance::source)
      .def_property_readonly("confidence",
                             [](const hal::Provenance &p) { return hal::confidence_name(p.confidence); })
      .def("__repr__", [](const hal::Provenance &p) {
        return "Provenance(confidence='" + std::string(hal::confidence_name(p.confidence)) + "', source='" +
               p.source + "')";
      });

  py::class_<PyTarget>(m, "Target", "One target's table: every field is an attribute of its own type.")
      .def_property_readonly("name", [](const PyTarget &t) { return t.target.name; })
      .def_property_readonly("aliases", [](const PyTarget &t) { return t.target.aliases; })
      .def_property_readonly("fields",
                             [](const PyTarget &t) {
                               std::vector<std::string> names;
                               for (const auto &[name, entry] : t.target.values)
                                 names.push_back(name);
                               return names;
                             })
      .def("__getattr__", [](const PyTarget &t, const std::string &f) { return value_of(t.entry(f).value); })
      .def("__getitem__",
           [](const PyTarget &t, const std::string &f) {
             if (const hal::Entry *e = t.target.find(f))
               return value_of(e->value);
             throw py::key_error(f);
           })
      .def("__contains__",
           [](const PyTarget &t, const std::string &f) { return t.target.find(f) != nullptr; })
      .def(
          "provenance", [](const PyTarget &t, const std::string &f) { return t.entry(f).provenance; },
          py::arg("field"))
      .def(
          "describe",
          [](const PyTarget &t, const std::string &f) {
            const hal::Field *field = t.session->schema.find(f);
            if (!field)
              throw py::attribute_error("the schema has no field '" + f + "'");
            py::dict d;
            d["section"] = field->section;
            d["unit"] = field->unit;
            d["meaning"] = field->meaning;
            d["source"] = field->source;
            return d;
          },
          py::arg("field"))
      .def("__dir__",
           [](const PyTarget &t) {
             std::vector<std::string> names = {"name", "aliases", "fields", "provenance", "describe"};
             for (const auto &[name, entry] : t.target.values)
               names.push_back(name);
             return names;
           })
      .def("__repr__", [](const PyTarget &t) { return "<anec.Target " + t.target.name + ">"; });

  m.def(
      "target",
      [](const std::string &name) {
        auto s = session();
        return PyTarget{s->target(name), s};
      },
      py::arg("name"), "The target a name or alias names (ANEC-HAL-006 when none does).");
  const auto max_memory = py::arg("max_memory") = uint64_t(anec::compiler::kDefaultMaxMemory);
  m.def("check", &check, py::arg("model"), py::arg("target") = "h13", py::arg("dims") = py::none(),
        max_memory);
  m.def("estimate", &estimate, py::arg("model"), py::arg("target") = "h13", py::arg("dims") = py::none(),
        py::arg("cost_model") = "calibrated", py::arg("calibration") = py::none(), max_memory);
  m.def("place", &place, py::arg("model"), py::arg("target") = "h13", py::arg("dims") = py::none(),
        max_memory);
  m.def("eval", &eval, py::arg("model"), py::arg("inputs") = py::none(), py::arg("precision") = "fp32",
        py::arg("seed") = 1, py::arg("dims") = py::none(), py::arg("gemm") = "reference", max_memory);
  m.def("load_program", &load_program, py::arg("program"), py::arg("generation") = py::none(),
        "The dump document of a descriptor program (a path or bytes) and the reader's warnings.");
  m.def("encode_program", &encode_program, py::arg("dump"), "The file a complete dump document describes.");
  m.def("fw_encode", &fw_encode, py::arg("command"), "A firmware command's wire form.");
  m.def("fw_decode", &fw_decode, py::arg("data"), "A firmware command's description.");
  m.def("fw_validate", &fw_validate, py::arg("data"), py::arg("channel") = "ring",
        "A firmware command's verdict, as `anec-fw validate --format json` prints it.");
}
