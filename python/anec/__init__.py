"""anec: the engine's targets, model checks, estimates, placement and host evaluation, its
task-descriptor programs and its firmware commands, from Python.

The functions are thin bindings over the C++ libraries the command-line tools use, and give what
they print: :func:`check`, :func:`estimate` and :func:`place` return the documents of
``anec check|estimate|place MODEL --target T --format json`` as dicts, :func:`eval` returns NumPy
arrays as ``anec eval -o DIR`` writes them, :func:`load_program` reads a program as
``anec-desc dump`` does and :meth:`Program.encode` writes it back as ``anec-desc encode`` does;
:mod:`anec.fw` encodes, decodes and validates firmware commands as ``anec-fw`` does.

The tables are found as the tools find them: :func:`set_tables`, else the environment variable
``ANEC_TABLES``, else the tables a wheel carries or an installed package was installed with, else
the source tree the module was built from. Every failure of the libraries raises :class:`Error`,
whose ``code`` is the reason code (``anec explain CODE`` says what it means).

Example::

    import anec, anec.fw
    anec.targets()                      # ['h11', 'h12', ...]
    t = anec.target("m1")               # an alias of h13
    t.num_nes, t.provenance("num_nes")  # 16, Provenance(confidence='measured', source='...')
    anec.check("model.onnx", target="h16")["verdict"]
    p = anec.load_program("conv.hwx")   # container, header, descriptors -> registers -> fields
    p.descriptors[0]["Common.InDim.Win"] = 77
    patched = p.encode()
    anec.fw.validate(anec.fw.encode({"command": "PING"})).disposition  # 'accept'
"""

import importlib as _importlib
import os as _os
import pathlib as _pathlib

try:
    _ext = _importlib.import_module("._anec", __name__)  # inside the package, as a wheel has it
except ModuleNotFoundError as e:
    if e.name != __name__ + "._anec":
        raise
    import _anec as _ext  # the build tree: <build>/python/module on the path

from ._program import Descriptor, Program, Register, Stream  # noqa: E402

Error, Provenance, Target = _ext.Error, _ext.Provenance, _ext.Target
for _type in (Error, Provenance, Target, Program, Descriptor, Stream, Register):
    _type.__module__ = __name__
del _type


def _package_resources():
    """The tables and modules the package comes with: a wheel's tables/ and modules/ folders,
    or for a package installed by ``cmake --install`` the prefix's, at the paths relative to the
    package that the install wrote into _installed.py (so a moved prefix still finds its own). The
    build tree's module finds the source tree's and the build's modules by itself."""
    here = _pathlib.Path(__file__).parent
    if (here / "tables" / "schema").is_dir():
        return here / "tables", here / "modules"
    try:
        from . import _installed
    except ImportError:
        return None, None
    return (here / _installed.TABLES).resolve(), (here / _installed.MODULES).resolve()


_tables, _modules = _package_resources()
if _tables is not None and (_tables / "schema").is_dir():
    _ext._set_packaged_tables(str(_tables))
# The modules the libraries load on first use (the ONNX reader, the BLAS module): $ANEC_PLUGIN_DIR is
# where they look first, and a package's are in it or beside its prefix, not beside the interpreter.
if _modules is not None and _modules.is_dir() and not _os.environ.get("ANEC_PLUGIN_DIR"):
    _os.environ["ANEC_PLUGIN_DIR"] = str(_modules)

from . import fw  # noqa: E402

__all__ = ["Error", "Provenance", "Target", "Program", "Descriptor", "Stream", "Register", "set_tables",
           "tables", "targets", "target", "check", "estimate", "place", "eval", "Outputs", "load_program", "fw"]

Error.__doc__ = """A failure of the libraries: ``code`` is its reason code (ANEC-<AREA>-<NNN>), ``message``
the text after it; ``str(error)`` is ``"CODE: message"``."""


def set_tables(path):
    """Use the tables in ``path`` (a folder with ``schema/``, ``targets/``, ...).

    ``None`` goes back to the default: ``$ANEC_TABLES`` when set, else the tables the wheel carries,
    else the source tree's, else the installed ones. The tables are read again on the next call that
    needs them.
    """
    _ext.set_tables(None if path is None else str(path))


def tables():
    """The tables folder in use (a ``pathlib.Path``)."""
    return _ext.tables()


def targets():
    """The canonical names of the targets (``'h11'``, ``'h13'``, ...), in line-up order."""
    return _ext.targets()


def target(name):
    """The target ``name`` names: a canonical name or an alias (``'m1'``), in any case.

    The result's attributes are the target table's fields, typed: ``int``, ``float``, ``str``,
    ``bool``, ``list[str]`` or ``bytes``; ``.fields`` lists them, ``.provenance(field)`` says where a
    value comes from and how sure it is, ``.describe(field)`` gives the schema's unit and meaning.
    Raises :class:`Error` ``ANEC-HAL-006`` (with the closest names) when nothing matches.
    """
    return _ext.target(name)


def check(model, target="h13", dims=None, max_memory=2 << 30):
    """Check ``model`` against ``target``.

    ``model`` is a path to an anec-graph JSON (.json), network plist (.plist) or ONNX (.onnx) file,
    the bytes of one (told apart by their first bytes), or an ``onnx.ModelProto``.

    ``target`` is a target, a chip (``'M4 Pro'``), a Mac model identifier or ``'all'`` (then a list,
    one document per target). ``dims`` binds symbolic dimensions: ``{'batch': 1, 'x:1': 512}``.
    Returns the document of ``anec check --format json``: ``verdict``, ``rejects``, ``ops``,
    ``findings`` (each with its reason code, value, limit and fix) and ``placement``.

    ``max_memory`` is the budget of reading the model, in bytes (2 GiB, as the tool's
    ``--max-memory``): an ONNX model whose nodes and size plan more raises :class:`Error`
    ``ANEC-MEM-001`` before it is parsed.
    """
    return _ext.check(model, target, dims, max_memory)


def estimate(model, target="h13", dims=None, cost_model="calibrated", calibration=None, max_memory=2 << 30):
    """Estimate the latency of ``model`` (as :func:`check` takes it, ``max_memory`` too) on ``target``.

    ``target`` is as :func:`check` takes it (``'all'``: a list, one document per target).

    ``cost_model`` is ``'calibrated'`` (the fitted per-op model, with an error band; ``calibration``
    names another calibration table) or ``'analytic'`` (the guide's roofline). Returns the document of
    ``anec estimate --format json``: ``latency_us`` (``None`` while a dimension is unbound),
    ``latency_low_us``/``latency_high_us``, ``bound``, ``parameters`` with their provenance, ``ops``.
    """
    return _ext.estimate(model, target, dims, cost_model,
                         None if calibration is None else str(calibration), max_memory)


def place(model, target="h13", dims=None, max_memory=2 << 30):
    """Where each operation of ``model`` (as :func:`check` takes it, ``max_memory`` too) runs: engine,
    GPU or CPU.

    Returns the document of ``anec place --format json`` (``'all'``: a list, one per target):
    ``partitions``, ``ops`` with the reasons of each fallback, ``boundaries`` with their transfers,
    ``latency_us``.
    """
    return _ext.place(model, target, dims, max_memory)


def eval(model, inputs=None, precision="fp32", seed=1, dims=None, gemm="reference",  # noqa: A001 - anec's own word
         max_memory=2 << 30):
    """Run ``model`` (as :func:`check` takes it) on the host; its outputs as ``{name: numpy.ndarray}``.

    A constant's ``file`` is relative to the model's folder (for bytes, to the current folder).

    ``inputs`` maps input names to arrays (read as float32, C order; only the element count must
    match the graph's shape); a missing input, and a constant without values, gets random values
    from ``seed``. ``precision='fp16'`` rounds where the engine rounds and applies its cliffs; the
    arrays are then float16. Shapes are ``[N, C, H, W]`` when the depth is 1, else
    ``[N, D, C, H, W]``. ``gemm='reference'`` multiplies with anec's own GEMM, whose results are
    the same bits on every host; ``'openblas'`` is faster, but its last bits depend on the kernel
    OpenBLAS picks for the CPU. ``max_memory`` is the budget in bytes (2 GiB, as ``anec eval``'s
    ``--max-memory``): an evaluation planned to need more, its NumPy outputs included, raises
    :class:`Error` ANEC-MEM-001 before anything is computed.

    Returns :class:`Outputs`, a dict of the outputs computed whose ``report`` is the document
    ``anec eval --format json`` prints: every graph output with ``computed``, the operations not
    evaluated and why (their outputs are absent from the dict), the tensors given seeded values,
    the fp16 events and the skipped operations. ``outputs.complete`` says whether every output was
    computed (``anec eval`` exits 1 when not).
    """
    arrays, report = _ext.eval(model, inputs, precision, seed, dims, gemm, max_memory)
    return Outputs(arrays, report)


class Outputs(dict):
    """The arrays :func:`eval` computed, by output name, with ``report`` (the ``anec.eval``
    document) and ``complete``."""

    def __init__(self, arrays, report):
        super().__init__(arrays)
        self.report = report

    @property
    def complete(self):
        """Whether every output of the graph was computed."""
        return all(o["computed"] for o in self.report["outputs"])


def load_program(program, generation=None):
    """Read the task-descriptor program ``program`` (a path, or its ``bytes``) as ``anec-desc dump``
    reads it: the container told by its bytes (an hwx container, an anec container, else a raw
    descriptor chain), the register database of ``generation`` (default: for an hwx its
    cpusubtype's, else 7, H13).

    Returns a :class:`Program`: ``container``, ``header`` (the container's fields),
    ``descriptors`` (each with ``registers``, each with ``fields``, names and values as the
    database gives them, and byte offsets), ``doc`` (the document of
    ``anec-desc dump --format json``) and ``encode()``. What the reader could not decode (an hwx
    whose generation has no walkable database, its descriptors then walked raw with the nearest
    generation's stream layout: ``doc["raw_layout"]``) is in ``warnings``. Raises :class:`Error` with the
    reason code ``anec-desc`` prints for a file it cannot read (``ANEC-HWX-...``, ``ANEC-TD-...``,
    ``ANEC-IO-001``).
    """
    doc, warnings = _ext.load_program(program, generation)
    return Program(doc, warnings)
