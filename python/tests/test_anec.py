"""The Python module anec over the libraries: every public function, its errors with their reason
codes, and agreement with what the command-line tools print (ANEC_TEST_TOOLS_DIR, set by ctest)."""
import json
import pathlib

import numpy as np
import pytest

import anec
from helpers import TOOLS, conv_relu_model, conv_relu_reference, needs_tools, tool_json

def write_graph(path, doc):
    path.write_text(json.dumps(dict({"format": "anec-graph", "version": 1}, **doc)))
    return path


WEIGHTS = np.arange(32, dtype=np.float32).reshape(4, 8) / 16 - 1


@pytest.fixture
def graph(tmp_path):
    """relu(linear(x, w)) and x + b: two inputs, a constant with its values, two outputs."""
    return write_graph(tmp_path / "small.json", {
        "inputs": [{"name": "x", "shape": [1, 8, 2, 3], "dtype": "fp32"},
                   {"name": "b", "shape": [1, 8, 2, 3], "dtype": "fp32"}],
        "constants": [{"name": "w", "shape": [1, 1, 4, 8], "data": WEIGHTS.ravel().tolist()}],
        "ops": [{"name": "fc", "op": "linear", "inputs": ["x", "w"], "outputs": ["y"],
                 "attrs": {"out_features": 4}},
                {"name": "r", "op": "relu", "inputs": ["y"], "outputs": ["o"]},
                {"name": "s", "op": "add", "inputs": ["x", "b"], "outputs": ["sum"]}],
        "outputs": ["o", "sum"]})


@pytest.fixture(autouse=True)
def default_tables(monkeypatch):
    monkeypatch.delenv("ANEC_TABLES", raising=False)
    anec.set_tables(None)
    yield
    anec.set_tables(None)


def test_tables_default_to_the_source_tree():
    assert (anec.tables() / "schema" / "hal.toml").is_file()
    assert anec.tables() == pathlib.Path(__file__).resolve().parents[2] / "tables"


def test_set_tables_and_environment(tmp_path, monkeypatch):
    source = anec.tables()
    anec.set_tables(tmp_path)
    assert anec.tables() == tmp_path
    with pytest.raises(anec.Error) as e:  # an empty folder: no schema to read
        anec.targets()
    assert e.value.code.startswith("ANEC-")
    anec.set_tables(None)
    monkeypatch.setenv("ANEC_TABLES", str(tmp_path / "elsewhere"))
    assert anec.tables() == tmp_path / "elsewhere"
    anec.set_tables(source)  # set_tables wins over the environment
    assert anec.tables() == source
    assert len(anec.targets()) == 28


def test_targets():
    names = anec.targets()
    assert len(names) == 28 and len(set(names)) == 28
    assert {"h11", "h13", "h16", "h17s"} <= set(names)
    assert all(n == n.lower() for n in names)


def test_target_typed_attributes_and_provenance():
    t = anec.target("h16")
    assert t.name == "h16" and repr(t) == "<anec.Target h16>"
    assert "m4" in t.aliases
    assert isinstance(t.num_nes, int) and t.num_nes > 0
    assert t.generation_tag == 16
    assert isinstance(t.family, str) and t.family == "A15"
    assert t["family_index"] == 4 and "family_index" in t and "no_such_field" not in t
    assert "num_nes" in t.fields and "num_nes" in dir(t)
    p = t.provenance("generation_tag")
    assert isinstance(p, anec.Provenance)
    assert p.confidence == "decoded" and "appendix D" in p.source
    assert "confidence='decoded'" in repr(p)
    d = t.describe("num_nes")
    assert d["unit"] == "cores" and d["meaning"]
    floats = [f for f in t.fields if isinstance(getattr(t, f), float)]
    assert floats, "a target has real-valued fields (bandwidths, rates)"


def test_target_aliases_and_case():
    assert anec.target("M1").name == "h13"
    assert anec.target("m4").name == "h16"


def test_target_errors():
    with pytest.raises(anec.Error) as e:
        anec.target("h99")
    assert e.value.code == "ANEC-HAL-006"
    assert "h99" in e.value.message and str(e.value).startswith("ANEC-HAL-006: ")
    assert isinstance(e.value, Exception) and type(e.value).__module__ == "anec"
    t = anec.target("h13")
    with pytest.raises(AttributeError):
        t.no_such_field
    with pytest.raises(KeyError):
        t["no_such_field"]
    with pytest.raises(AttributeError):
        t.provenance("no_such_field")
    with pytest.raises(AttributeError):
        t.describe("no_such_field")


@needs_tools
def test_target_matches_anec_hal_show():
    shown = tool_json("anec-hal", "show", "h16", "--format", "json")
    t = anec.target("h16")
    compared = 0
    for section in shown.values():
        if not isinstance(section, dict):
            continue
        for field, entry in section.items():
            if not isinstance(entry, dict) or "value" not in entry or field not in t:
                continue
            value = getattr(t, field)
            if isinstance(entry["value"], (int, float, str, bool)) and not isinstance(value, bytes):
                assert value == entry["value"], field
                assert t.provenance(field).confidence == entry["confidence"], field
                assert t.provenance(field).source == entry["source"], field
                compared += 1
    assert compared > 50


def test_check(graph):
    r = anec.check(graph, target="h16")
    assert r["target"] == "h16"
    assert r["verdict"] in ("native", "decompose", "reject")
    assert [o["op"] for o in r["ops"]] == ["fc", "r", "s"]
    assert r["placement"]["target"] == "h16"
    assert anec.check(str(graph))["target"] == "h13"  # the default target, a str path


@needs_tools
@pytest.mark.parametrize("command", ["check", "estimate", "place"])
def test_documents_are_the_tools_json(graph, command):
    ours = getattr(anec, command)(graph, target="h15")
    theirs = tool_json("anec", command, str(graph), "--target", "h15", "--format", "json")
    assert ours == theirs


def test_check_all_targets_and_chips(graph):
    rs = anec.check(graph, target="all")
    assert [r["target"] for r in rs] == anec.targets()
    assert anec.check(graph, target="M4 Pro")["target"].startswith("h16")


def test_check_rejects_with_reason_codes(tmp_path):
    # A convolution kernel wider than any target allows: a reject naming its reason code.
    model = write_graph(tmp_path / "wide.json", {
        "inputs": [{"name": "x", "shape": [1, 3, 64, 64]}],
        "ops": [{"name": "c", "op": "conv", "inputs": ["x"], "outputs": ["y"],
                 "attrs": {"out_channels": 8, "kernel": [1, 40]}}],
        "outputs": ["y"]})
    r = anec.check(model, target="h13")
    assert r["verdict"] != "native"
    assert r["findings"] and all(f["code"].startswith("ANEC-") for f in r["findings"])


def test_estimate(graph):
    e = anec.estimate(graph, target="h16")
    assert e["model"] == "calibrated" and e["latency_us"] > 0
    assert e["latency_low_us"] <= e["latency_us"] <= e["latency_high_us"]
    a = anec.estimate(graph, target="h16", cost_model="analytic")
    assert a["model"] == "analytic" and a["latency_us"] > 0
    assert set(a["parameters"]) == {"peak_tflops", "bandwidth_gbps", "dispatch_floor_ms"}
    assert len(anec.estimate(graph, target="all")) == 28
    with pytest.raises(ValueError):
        anec.estimate(graph, cost_model="roofline")
    with pytest.raises(anec.Error) as err:
        anec.estimate(graph, calibration=graph.parent / "missing.toml")
    assert err.value.code.startswith("ANEC-")


def test_dims(tmp_path):
    model = write_graph(tmp_path / "sym.json", {
        "inputs": [{"name": "x", "shape": ["batch", 8, 4, 4]}],
        "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}],
        "outputs": ["y"]})
    assert anec.estimate(model, target="h13")["latency_us"] is None  # unbound: no total
    assert anec.estimate(model, target="h13", dims={"batch": 2})["latency_us"] > 0
    with pytest.raises(ValueError):
        anec.check(model, dims={"batch": 0})
    with pytest.raises(ValueError):
        anec.check(model, dims={"batch": 2 ** 41})


def test_place(graph):
    p = anec.place(graph, target="h16")
    assert p["target"] == "h16"
    assert p["engine_ops"] + p["gpu_ops"] + p["cpu_ops"] == 3
    assert sum(part["ops"] for part in p["partitions"]) == 3
    assert len(anec.place(graph, target="all")) == 28


@pytest.mark.parametrize("function", [anec.check, anec.estimate, anec.place])
def test_model_errors(tmp_path, function):
    cases = {
        "bad-version.json": ('{"format": "anec-graph", "version": 2}', "ANEC-GRAPH-001"),
        "malformed.json": ("{bad", "ANEC-JSON-001"),
        "garbage.onnx": ("garbage", "ANEC-ONNX-001"),
        "model.foo": ("", "ANEC-MODEL-001"),
    }
    for name, (text, code) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(anec.Error) as e:
            function(tmp_path / name, target="h13")
        assert e.value.code == code, name
    with pytest.raises(anec.Error) as e:
        function(tmp_path / "missing.json")
    assert e.value.code == "ANEC-IO-001"
    with pytest.raises(anec.Error) as e:
        function(tmp_path / "model.foo", target="h99")
    assert e.value.code == "ANEC-HAL-006"


SHARED_PLIST = pathlib.Path(__file__).resolve().parents[3] / "shared/testdata/external/tinygrad/net.plist"


def test_models_as_bytes(graph):
    text = graph.read_bytes()
    strided = memoryview(bytes(b for c in text for b in (c, 0)))[::2]  # every other byte: the text
    for model in (text, bytearray(text), memoryview(text), b"\n  " + text, strided):
        assert anec.check(model, target="h16") == anec.check(graph, target="h16")
        assert anec.estimate(model, target="h16") == anec.estimate(graph, target="h16")
        assert anec.place(model, target="h16") == anec.place(graph, target="h16")
    out = anec.eval(graph.read_bytes(), seed=5)
    np.testing.assert_array_equal(out["sum"], anec.eval(graph, seed=5)["sum"])
    with pytest.raises(anec.Error) as e:
        anec.check(b"{bad")
    assert e.value.code == "ANEC-JSON-001" and "<bytes>" in e.value.message
    with pytest.raises(TypeError):
        anec.check(42)


@pytest.mark.skipif(not SHARED_PLIST.is_file(), reason="no ../shared/testdata beside the project")
def test_network_plist_as_path_and_bytes():
    r = anec.check(SHARED_PLIST, target="h13")
    assert r["ops"] and r == anec.check(SHARED_PLIST.read_bytes(), target="h13")
    if TOOLS:
        assert r == tool_json("anec", "check", str(SHARED_PLIST), "--target", "h13", "--format", "json")


SHARED_COREML = pathlib.Path(__file__).resolve().parents[3] / "shared/testdata/coreml"


@pytest.mark.skipif(not SHARED_COREML.is_dir(), reason="no ../shared/testdata beside the project")
def test_coreml_and_mil_as_path_bytes_and_bundle():
    # a NeuralNetwork .mlmodel and an mlProgram .mlmodel: the bytes read as the file
    for name in ("mlmodel/coremltools/TinyDrawingEmbedding.mlmodel",
                 "mlmodel/bisenet/bisenet_mlprogram_spec_no_weights.mlmodel"):
        spec = SHARED_COREML / name
        r = anec.check(spec, target="h16")
        assert r["ops"] and r == anec.check(spec.read_bytes(), target="h16"), name
    # MIL text: its bytes read as the file (this program has no weights to find beside it)
    bundle = SHARED_COREML / "mlmodelc/coremltools/add_model.mlmodelc"
    mil = bundle / "model.mil"
    r = anec.check(mil, target="h16")
    assert [o["type"] for o in r["ops"]] == ["mul"]  # add_model.mlmodelc multiplies
    assert r["ops"] == anec.check(mil.read_bytes(), target="h16")["ops"]
    assert r["ops"] == anec.check(b"// a comment\n" + mil.read_bytes(), target="h16")["ops"]
    # a bundle is one model, by its path
    assert anec.check(bundle, target="h16")["ops"] == r["ops"]
    package = SHARED_COREML / "mlpackage/mobius-silero/silero-vad-stft-v6.0.0.mlpackage"
    assert len(anec.check(package, target="h16")["ops"]) == 12
    with pytest.raises(anec.Error) as e:
        anec.check(b"program(1.0) { func main<ios15>(", target="h16")
    assert e.value.code.startswith("ANEC-MIL-")


def test_onnx_model_objects():
    class ModelProto:  # onnx.ModelProto's one method the module uses
        def SerializeToString(self):
            return b"\x08\x07garbage"

    with pytest.raises(anec.Error) as e:
        anec.check(ModelProto())
    assert e.value.code == "ANEC-ONNX-001" and "ModelProto" in e.value.message
    with pytest.raises(anec.Error) as e:
        anec.estimate(b"\x08\x07garbage")
    assert e.value.code == "ANEC-ONNX-001"


def test_onnx_model_proto(tmp_path):
    model, w, b = conv_relu_model()
    path = tmp_path / "conv_relu.onnx"
    path.write_bytes(model.SerializeToString())
    for fn in (anec.check, anec.estimate, anec.place):
        doc = fn(model, target="h16")
        assert doc == fn(path, target="h16") == fn(path.read_bytes(), target="h16"), fn.__name__
    r = anec.check(model, target="h16")
    assert [(o["type"], o["verdict"]) for o in r["ops"]] == [("conv", "native"), ("relu", "native")]
    if TOOLS:
        assert r == tool_json("anec", "check", str(path), "--target", "h16", "--format", "json")
    x = np.random.default_rng(1).standard_normal((1, 8, 4, 4)).astype(np.float32)
    y = anec.eval(model, {"x": x})["y"]
    np.testing.assert_allclose(y, conv_relu_reference(x, w, b), rtol=1e-5, atol=1e-5)
    for fn in (anec.check, anec.estimate, anec.place, anec.eval):  # reading is planned first
        with pytest.raises(anec.Error) as e:
            fn(model, max_memory=1024)
        assert e.value.code == "ANEC-MEM-001" and "reading the model needs about" in e.value.message, fn


def test_eval_matches_numpy(graph):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 8, 2, 3)).astype(np.float32)
    b = rng.standard_normal((1, 8, 2, 3)).astype(np.float32)
    out = anec.eval(graph, {"x": x, "b": b})
    assert set(out) == {"o", "sum"}
    expected = np.maximum(np.einsum("oc,nchw->nohw", WEIGHTS, x), 0)
    assert out["o"].dtype == np.float32 and out["o"].shape == (1, 4, 2, 3)
    np.testing.assert_allclose(out["o"], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["sum"], x + b)


def test_eval_fp16_and_seeds(graph):
    x = np.linspace(-2, 2, 48, dtype=np.float32).reshape(1, 8, 2, 3)
    out = anec.eval(graph, {"x": x, "b": x.tolist()}, precision="fp16")  # any array-like
    assert out["o"].dtype == np.float16
    expected = np.maximum(np.einsum("oc,nchw->nohw", WEIGHTS, x.astype(np.float16).astype(np.float32)), 0)
    np.testing.assert_allclose(out["o"].astype(np.float32), expected, rtol=2e-3, atol=2e-3)
    # Missing inputs are seeded: the same seed gives the same values, another seed others.
    a, b = anec.eval(graph, seed=3), anec.eval(graph, seed=3)
    np.testing.assert_array_equal(a["sum"], b["sum"])
    assert not np.array_equal(a["sum"], anec.eval(graph, seed=4)["sum"])


def test_eval_report(graph, tmp_path):
    out = anec.eval(graph, seed=5)
    assert isinstance(out, anec.Outputs) and out.complete
    assert [o["name"] for o in out.report["outputs"]] == ["o", "sum"]
    assert out.report["seeded"] == ["x (input)", "b (input)"] and out.report["unevaluated"] == []
    if TOOLS:
        assert out.report == tool_json("anec", "eval", str(graph), "--seed", "5", "--format", "json")
    # An operation without a kernel: its output and what reads it are absent, and the report says why.
    partial = write_graph(tmp_path / "partial.json", {
        "inputs": [{"name": "x", "shape": [1, 2, 2, 2]}],
        "ops": [{"name": "t", "op": "tan", "inputs": ["x"], "outputs": ["y"]},
                {"name": "r", "op": "relu", "inputs": ["y"], "outputs": ["z"]}],
        "outputs": ["z", "x"]})
    out = anec.eval(partial)
    assert list(out) == ["x"] and not out.complete
    assert [(o["name"], o["computed"]) for o in out.report["outputs"]] == [("z", False), ("x", True)]
    assert [u["op"] for u in out.report["unevaluated"]] == ["t", "r"]
    assert "which was not computed" in out.report["unevaluated"][1]["why"]


def test_eval_errors(graph):
    with pytest.raises(anec.Error) as e:
        anec.eval(graph, {"x": np.zeros(5, np.float32)})
    assert e.value.code == "ANEC-EVAL-002"
    with pytest.raises(anec.Error) as e:
        anec.eval(graph, {"nope": np.zeros(48, np.float32)})
    assert e.value.code == "ANEC-EVAL-002"
    with pytest.raises(TypeError):
        anec.eval(graph, {"x": "not numbers"})
    with pytest.raises(ValueError):
        anec.eval(graph, precision="fp64")
    with pytest.raises(anec.Error) as e:
        anec.eval(graph.parent / "missing.json")
    assert e.value.code == "ANEC-IO-001"
    with pytest.raises(ValueError) as v:  # an argument is quoted as an excerpt, however long
        anec.eval(graph, precision="x" * (1 << 24))
    assert len(str(v.value)) < 200
    with pytest.raises(ValueError) as v:
        anec.estimate(graph, cost_model="x" * (1 << 24))
    assert len(str(v.value)) < 200
    with pytest.raises(anec.Error) as e:  # planned before anything is computed
        anec.eval(graph, max_memory=256)
    assert e.value.code == "ANEC-MEM-001" and "memory budget of 256 B" in str(e.value)


def test_docstrings():
    for name in anec.__all__:
        assert getattr(anec, name).__doc__, name
    for cls in (anec.Program, anec.Descriptor, anec.Stream, anec.Register):
        for name, member in vars(cls).items():
            if not name.startswith("_") and callable(getattr(member, "fget", member)):
                assert member.__doc__, f"{cls.__name__}.{name}"


def test_stubs_name_everything_public():
    """The type stubs (.pyi) declare every public name of the package and of anec.fw, and every
    public method and property of their classes."""
    import ast
    import anec.fw

    def declared(stub):
        tree = ast.parse((pathlib.Path(anec.__file__).parent / stub).read_text())
        top, classes = set(), {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                classes[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} | {
                    n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                top.add(node.name)
            elif isinstance(node, ast.ImportFrom):
                top.update(a.asname or a.name for a in node.names)
        return top, classes

    for module, stub in ((anec, "__init__.pyi"), (anec.fw, "fw.pyi")):
        top, classes = declared(stub)
        assert set(module.__all__) <= top, stub
        for name in module.__all__:
            cls = getattr(module, name)
            if isinstance(cls, type) and name in classes and cls.__module__.startswith("anec"):
                members = {n for n in vars(cls)
                           if not n.startswith("_") or n in ("__getitem__", "__setitem__")}
                if hasattr(cls, "__slots__") and name == "Violation":
                    members |= set(cls.__slots__)
                assert members <= classes[name], (name, members - classes[name])
