"""The wheel: built offline (python/wheel/make_wheel.py, Debian's python3-build and setuptools) from
the built extension, installed with pip into a fresh virtual environment, and used from there with
the tables and modules it carries. Needs ANEC_TEST_MODULE, ANEC_TEST_VERSION and ANEC_TEST_PLUGINS
(set by ctest)."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from helpers import conv_relu_model, conv_relu_reference

MODULE = os.environ.get("ANEC_TEST_MODULE")
VERSION = os.environ.get("ANEC_TEST_VERSION")
PLUGINS = [p for p in os.environ.get("ANEC_TEST_PLUGINS", "").split(":") if p]
PYTHON_DIR = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not MODULE or not VERSION,
                                reason="ANEC_TEST_MODULE and ANEC_TEST_VERSION are not set (run from ctest)")


def run(*args, **kwargs):
    out = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_wheel_installs_and_runs_in_a_fresh_venv(tmp_path):
    for module, package in (("build", "python3-build"), ("setuptools", "python3-setuptools"),
                            ("ensurepip", "python3-venv")):
        pytest.importorskip(module, reason=f"Debian's {package} is needed to build and install the wheel")
    plugin_args = [a for p in PLUGINS for a in ("--plugin", p)]
    wheel = pathlib.Path(run(sys.executable, PYTHON_DIR / "wheel" / "make_wheel.py", "--module", MODULE,
                             "--tables", PYTHON_DIR.parent / "tables", "--version", VERSION,
                             "--out", tmp_path / "dist", *plugin_args).strip())
    assert wheel.name.startswith(f"anec-{VERSION}-cp{sys.version_info[0]}{sys.version_info[1]}-")
    # The system's site-packages for NumPy, the wheel's one requirement: pip installs without a network.
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--system-site-packages", venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check", wheel)

    graph = tmp_path / "relu.json"
    graph.write_text(json.dumps({
        "format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 2, 2, 2]}],
        "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]}))
    # An ONNX convolution: read through the wheel's ONNX module, computed through its BLAS module.
    model, w, b = conv_relu_model()
    onnx_file = tmp_path / "conv_relu.onnx"
    onnx_file.write_bytes(model.SerializeToString())
    x = np.random.default_rng(2).standard_normal((1, 8, 4, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "expected.npy", conv_relu_reference(x, w, b))
    script = textwrap.dedent(f"""
        import json, os, pathlib, numpy as np, anec
        here = pathlib.Path(anec.__file__).parent
        assert here.is_relative_to(pathlib.Path({str(venv)!r})), here
        assert anec.tables() == here / "tables", anec.tables()
        # The modules are the wheel's: $ANEC_PLUGIN_DIR, searched first, is its modules/ folder.
        assert os.environ["ANEC_PLUGIN_DIR"] == str(here / "modules"), os.environ.get("ANEC_PLUGIN_DIR")
        modules = sorted(p.name for p in (here / "modules").glob("*.so"))
        x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2) - 4
        y = anec.eval({str(graph)!r}, {{"x": x}})["y"]
        assert (y == np.maximum(x, 0)).all()
        try:
            anec.target("h99")
        except anec.Error as e:
            code = e.code
        conv = anec.eval({str(onnx_file)!r}, {{"x": np.load({str(tmp_path / "x.npy")!r})}})["y"]
        np.testing.assert_allclose(conv, np.load({str(tmp_path / "expected.npy")!r}), rtol=1e-5, atol=1e-5)
        import anec.fw
        fw = anec.fw.validate(anec.fw.encode({{"command": "PING"}})).disposition
        print(json.dumps({{"targets": len(anec.targets()), "h16": anec.target("m4").name,
                          "verdict": anec.check({str(graph)!r}, target="h16")["verdict"], "code": code,
                          "fw": fw, "stubs": sorted(p.name for p in here.glob("*.pyi")),
                          "modules": modules}}))
        """)
    # Away from the source tree, with nothing on PYTHONPATH: the installed package is the one used.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ANEC_TABLES")}
    result = json.loads(run(python, "-c", script, cwd=tmp_path, env=env))
    assert result == {"targets": 28, "h16": "h16", "verdict": "native", "code": "ANEC-HAL-006",
                      "fw": "accept", "stubs": ["__init__.pyi", "fw.pyi"],
                      "modules": sorted(pathlib.Path(p).name for p in PLUGINS)}
