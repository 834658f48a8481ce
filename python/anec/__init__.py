"""anec: the engine's targets, model checks, estimates, placement and host evaluation from Python.

The functions are thin bindings over the C++ libraries the command-line tools use, and give what
they print: :func:`check`, :func:`estimate` and :func:`place` return the documents of
``anec check|estimate|place MODEL --target T --format json`` as dicts, :func:`eval` returns NumPy
arrays as ``anec eval -o DIR`` writes them.

The tables are those of the source tree the module was built from, unless :func:`set_tables` or the
environment variable ``ANEC_TABLES`` names others. Every failure of the libraries raises
:class:`Error`, whose ``code`` is the reason code (``anec explain CODE`` says what it means).

Example::

    import anec
    anec.targets()                      # ['h11', 'h12', ...]
    t = anec.target("m1")               # an alias of h13
    t.num_nes, t.provenance("num_nes")  # 16, Provenance(confidence='measured', source='...')
    anec.check("model.onnx", target="h16")["verdict"]
"""

import importlib as _importlib
import pathlib as _pathlib

try:
    _ext = _importlib.import_module("._anec", __name__)  # inside the package, as a wheel has it
except ModuleNotFoundError as e:
    if e.name != __name__ + "._anec":
        raise
    import _anec as _ext  # the build tree: <build>/python/module on the path

Error, Provenance, Target = _ext.Error, _ext.Provenance, _ext.Target
for _type in (Error, Provenance, Target):
    _type.__module__ = __name__

# A wheel carries the tables beside the package; the build tree's module finds the source tree's.
if (_pathlib.Path(__file__).parent / "tables" / "schema").is_dir():
    _ext._set_packaged_tables(str(_pathlib.Path(__file__).parent / "tables"))

__all__ = ["Error", "Provenance", "Target", "set_tables", "tables", "targets", "target", "check",
           "estimate", "place", "eval"]

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


def check(model, target="h13", dims=None):
    """Check ``model`` against ``target``.

    ``model`` is a path to an anec-graph JSON (.json), network plist (.plist) or ONNX (.onnx) file,
    the bytes of one (told apart by their first bytes), or an ``onnx.ModelProto``.

    ``target`` is a target, a chip (``'M4 Pro'``), a Mac model identifier or ``'all'`` (then a list,
    one document per target). ``dims`` binds symbolic dimensions: ``{'batch': 1, 'x:1': 512}``.
    Returns the document of ``anec check --format json``: ``verdict``, ``rejects``, ``ops``,
    ``findings`` (each with its reason code, value, limit and fix) and ``placement``.
    """
    return _ext.check(model, target, dims)


def estimate(model, target="h13", dims=None, cost_model="calibrated", calibration=None):
    """Estimate the latency of ``model`` (as :func:`check` takes it) on ``target``.

    ``target`` is as :func:`check` takes it (``'all'``: a list, one document per target).

    ``cost_model`` is ``'calibrated'`` (the fitted per-op model, with an error band; ``calibration``
    names another calibration table) or ``'analytic'`` (the guide's roofline). Returns the document of
    ``anec estimate --format json``: ``latency_us`` (``None`` while a dimension is unbound),
    ``latency_low_us``/``latency_high_us``, ``bound``, ``parameters`` with their provenance, ``ops``.
    """
    return _ext.estimate(model, target, dims, cost_model,
                         None if calibration is None else str(calibration))


def place(model, target="h13", dims=None):
    """Where each operation of ``model`` (as :func:`check` takes it) runs: engine, GPU or CPU.

    Returns the document of ``anec place --format json`` (``'all'``: a list, one per target):
    ``partitions``, ``ops`` with the reasons of each fallback, ``boundaries`` with their transfers,
    ``latency_us``.
    """
    return _ext.place(model, target, dims)


def eval(model, inputs=None, precision="fp32", seed=1, dims=None):  # noqa: A001 - anec's own word
    """Run ``model`` (as :func:`check` takes it) on the host; its outputs as ``{name: numpy.ndarray}``.

    A constant's ``file`` is relative to the model's folder (for bytes, to the current folder).

    ``inputs`` maps input names to arrays (read as float32, C order; only the element count must
    match the graph's shape); a missing input, and a constant without values, gets random values
    from ``seed``. ``precision='fp16'`` rounds where the engine rounds and applies its cliffs; the
    arrays are then float16. Shapes are ``[N, C, H, W]`` when the depth is 1, else
    ``[N, D, C, H, W]``. An output the evaluator cannot compute is absent from the result.
    """
    return _ext.eval(model, inputs, precision, seed, dims)
