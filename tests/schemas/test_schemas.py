"""Every JSON document the tools print, checked against its schema in docs/schemas/ (Debian's
python3-jsonschema, draft 2020-12), on real inputs: Apple-compiled programs and a network plist from
../shared/testdata, the measured latencies of ../shared/data, the firmware and HAL fixtures the build
makes. Also the two file formats: graphs (anec-graph) and target definitions (anec-target).

Run from ctest, which sets ANEC_TEST_TOOLS_DIR, ANEC_TEST_TABLES_DIR, ANEC_TEST_SHARED_DIR and
ANEC_TEST_FIXTURES_DIR."""
import copy
import functools
import json
import os
import pathlib
import re
import subprocess
import tomllib

import jsonschema
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"
ENV = {k: os.environ.get(k) for k in ("ANEC_TEST_TOOLS_DIR", "ANEC_TEST_TABLES_DIR", "ANEC_TEST_SHARED_DIR",
                                      "ANEC_TEST_FIXTURES_DIR")}
pytestmark = pytest.mark.skipif(not all(ENV.values()), reason="run from ctest (the ANEC_TEST_* paths)")

SHARED = pathlib.Path(ENV["ANEC_TEST_SHARED_DIR"] or ".")
FIXTURES = pathlib.Path(ENV["ANEC_TEST_FIXTURES_DIR"] or ".")
EXTERNAL = SHARED / "testdata" / "external"
NEWER = SHARED / "testdata" / "newer" / "alexaltea-ane"
PLIST = EXTERNAL / "tinygrad" / "net.plist"
COMMANDS = ROOT / "tests" / "firmware" / "commands"

# A small graph with an op of no engine path (tan), one above the older families' floor (sin), one
# the runtime skips (identity) and an input with an unbound dimension.
GRAPH = {
    "format": "anec-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 8, 16, 16]}, {"name": "s", "shape": ["N", 8, 4, 4]}],
    "ops": [
        {"name": "c", "op": "conv", "inputs": ["x"], "outputs": ["c"],
         "attrs": {"out_channels": 16, "kernel": [3, 3], "pad": [1, 1, 1, 1]}},
        {"name": "r", "op": "relu", "inputs": ["c"], "outputs": ["r"]},
        {"name": "p", "op": "max_pool", "inputs": ["r"], "outputs": ["p"],
         "attrs": {"kernel": [2, 2], "stride": [2, 2]}},
        {"name": "t", "op": "transpose", "inputs": ["p"], "outputs": ["t"], "attrs": {"perm": [0, 1, 2, 4, 3]}},
        {"name": "i", "op": "identity", "inputs": ["t"], "outputs": ["i"]},
        {"name": "tan", "op": "tan", "inputs": ["i"], "outputs": ["tan"]},
        {"name": "sin", "op": "sin", "inputs": ["tan"], "outputs": ["sin"]},
        {"name": "sr", "op": "relu", "inputs": ["s"], "outputs": ["sr"]},
    ],
    "outputs": ["sin", "sr"],
}

# A linear layer (the tuner rewrites it as a 1x1 conv) and a product past fp16's range.
TUNABLE = {
    "format": "anec-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 64, 1, 1]}],
    "constants": [{"name": "big", "shape": [1, 8, 1, 1], "data": [300.0] * 8}],
    "ops": [
        {"name": "fc", "op": "linear", "inputs": ["x"], "outputs": ["y"], "attrs": {"out_features": 32}},
        {"name": "sq", "op": "mul", "inputs": ["big", "big"], "outputs": ["sq"]},
    ],
    "outputs": ["y", "sq"],
}


@functools.cache
def schema(name):
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def registry():
    """Every schema by its $id, so one can $ref another (the target format from anec-hal.list)."""
    from referencing import Registry, Resource  # jsonschema >= 4.18
    return Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in map(schema, schema_names()))


def schema_names():
    return sorted(p.name[:-len(".schema.json")] for p in SCHEMAS.glob("*.schema.json"))


@functools.cache
def validator(name):
    s = schema(name)
    try:
        return jsonschema.Draft202012Validator(s, registry=registry())
    except (ImportError, TypeError):  # Debian's jsonschema 4.10: a resolver over the same folder
        store = {t["$id"]: t for t in map(schema, schema_names())}
        resolver = jsonschema.RefResolver.from_schema(s, store=store)
        return jsonschema.Draft202012Validator(s, resolver=resolver)


def validate(name, document):
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, f"{name}: " + "; ".join(
        f"at {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors[:5])


def tool(name, *args, ok=(0, 1)):
    cmd = [str(pathlib.Path(ENV["ANEC_TEST_TOOLS_DIR"]) / name), "--tables", ENV["ANEC_TEST_TABLES_DIR"],
           *map(str, args)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode in ok, f"{cmd}: exit {out.returncode}\n{out.stderr}"
    return out.stdout


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """Inputs made once: the graph, a firmware command and a capture of three, a dump, a dir of each."""
    d = tmp_path_factory.mktemp("schemas")
    (d / "graph.json").write_text(json.dumps(GRAPH))
    (d / "tunable.json").write_text(json.dumps(TUNABLE))
    (d / "models").mkdir()
    (d / "models" / "a.json").write_text(json.dumps(GRAPH))
    (d / "models" / "broken.json").write_text("{")
    (d / "fw").mkdir()
    for toml in ("ping", "inference", "procedure_call"):
        tool("anec-fw", "encode", COMMANDS / f"{toml}.toml", "-o", d / "fw" / f"{toml}.bin", ok=(0,))
    (d / "capture.bin").write_bytes(b"".join((d / "fw" / f"{t}.bin").read_bytes()
                                             for t in ("ping", "inference", "procedure_call")))
    corrupt = bytearray((d / "capture.bin").read_bytes())
    corrupt[8] ^= 0xff  # the first command's header: its checksum no longer matches
    (d / "corrupt.bin").write_bytes(bytes(corrupt))
    tool("anec-desc", "convert", EXTERNAL / "tinygrad" / "conv.hwx", "-o", d / "conv.anec", ok=(0,))
    tool("anec-hal", "encode", "h16", "-o", d / "h16.blob", ok=(0,))
    return d


# Each document, and the commands that print it: real inputs, and where a document has branches
# (a rejecting model, an unreadable file, a failed check) an input that takes them.
CASES = {
    "anec.check": [("anec", "check", "{work}/graph.json", "--target", "h13", "--format", "json"),
                   ("anec", "check", PLIST, "--target", "h11", "--format", "json")],
    "anec.estimate": [("anec", "estimate", PLIST, "--target", "h16", "--format", "json"),
                      ("anec", "estimate", PLIST, "--target", "m1", "--format", "json"),
                      ("anec", "estimate", "{work}/graph.json", "--target", "h13", "--format", "json"),
                      ("anec", "estimate", "{work}/graph.json", "--dim", "N=4", "--target", "h13", "--model",
                       "analytic", "--format", "json")],
    "anec.place": [("anec", "place", PLIST, "--target", "h13", "--format", "json"),
                   ("anec", "place", "{work}/graph.json", "--target", "h17", "--format", "json")],
    "anec.matrix": [("anec", "check", PLIST, "--target", "all", "--format", "json"),
                    ("anec", "estimate", "{work}/graph.json", "--target", "all", "--format", "json"),
                    ("anec", "estimate", PLIST, "--target", "all", "--format", "json")],
    "anec.place-matrix": [("anec", "place", PLIST, "--target", "all", "--format", "json")],
    "anec.corpus": [("anec", "check", "{work}/models", PLIST, "--target", "h13", "--format", "json"),
                    ("anec", "estimate", "{work}/models", PLIST, "--target", "all", "--format", "json")],
    "anec.calibrate": [("anec", "calibrate", SHARED / "data" / "ane-measured" / "train.tsv", "--check", "--rows",
                        "--format", "json")],
    "anec.eval": [("anec", "eval", "{work}/graph.json", "--dim", "N=2", "--format", "json"),
                  ("anec", "eval", "{work}/tunable.json", "--precision", "fp16", "--format", "json")],
    "anec.tune": [("anec", "tune", "{work}/graph.json", "--dim", "N=2", "--target", "h13", "-o",
                   "{work}/tuned.json", "--format", "json"),
                  ("anec", "tune", "{work}/tunable.json", "--target", "all", "-o", "{work}/tuned2.json",
                   "--format", "json")],
    "anec-desc.dump": [("anec-desc", "dump", EXTERNAL / "tinygrad" / "conv.hwx", "--format", "json"),
                       ("anec-desc", "dump", EXTERNAL / "eiln-ane" / "kernels" / "activation" / "softmax.bin",
                        "--format", "json"),
                       ("anec-desc", "dump", EXTERNAL / "eiln-ane" / "kernels" / "activation" / "softmax.bin",
                        "--td", "2", "--format", "json"),
                       ("anec-desc", "dump", NEWER / "matmul_h15.hwx", "--format", "json"),
                       ("anec-desc", "dump", "{work}/conv.anec", "--format", "json")],
    "anec-desc.audit": [("anec-desc", "audit", EXTERNAL / "tinygrad" / "conv.hwx", "--format", "json"),
                        ("anec-desc", "audit", EXTERNAL / "eiln-ane" / "kernels" / "binary" / "add.bin",
                         "--format", "json")],
    "anec-desc.audit-corpus": [("anec-desc", "audit", EXTERNAL / "tinygrad", "{work}/models/broken.json",
                                "--format", "json")],
    "anec-fw.commands": [("anec-fw", "commands", "--format", "json")],
    "anec-fw.command": [("anec-fw", "decode", "{work}/fw/inference.bin", "--format", "json"),
                        ("anec-fw", "decode", "{work}/fw/procedure_call.bin", "--format", "json")],
    "anec-fw.validate": [("anec-fw", "validate", "{work}/fw/ping.bin", "--format", "json"),
                         ("anec-fw", "validate", "{work}/corrupt.bin", "--format", "json")],
    "anec-fw.validate-stream": [("anec-fw", "validate", "{work}/capture.bin", "--stream", "--format", "json"),
                                ("anec-fw", "validate", "{work}/corrupt.bin", "--stream", "--format", "json")],
    "anec-fw.validate-corpus": [("anec-fw", "validate", "{work}/fw", "{work}/graph.json", "--format", "json")],
    "anec-fw.tables": [("anec-fw", "tables", FIXTURES / "fw_standin.macho", "--format", "json")],
    "anec-fw.simulate": [("anec-fw", "simulate", ROOT / "tests" / "firmware" / "scripts" / "recovery.toml",
                          "--format", "json")],
    "anec-hal.list": [("anec-hal", "list", "--format", "json")],
    "anec-hal.diff": [("anec-hal", "diff", "h13", "h17s", "--format", "json"),
                      ("anec-hal", "diff", "h11", "h11", "--all", "--format", "json")],
    "anec-hal.extract": [("anec-hal", "extract", FIXTURES / "libhal_prefix.dylib", "-o", "{work}/prefix", "--format",
                          "json"),
                         ("anec-hal", "extract", FIXTURES / "libhal_enum.dylib", "-o", "{work}/enum", "--format", "json")],
    "anec-hal.schema": [("anec-hal", "schema", "--format", "json")],
    "anec-hal.xref": [("anec-hal", "xref", FIXTURES / "libhal_O2.dylib", "--format", "json")],
    "anec-target": [*(("anec-hal", "show", t, "--format", "json") for t in ("h11", "h13", "h16", "h18")),
                    ("anec-hal", "decode", "{work}/h16.blob", "--target", "h16", "--format", "json")],
}


def documents(name, work):
    for case in CASES[name]:
        args = [str(a).format(work=work) for a in case]
        yield " ".join(args[1:3]), json.loads(tool(args[0], *args[1:], ok=(0, 1, 2)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_document_matches_its_schema(name, work):
    for what, doc in documents(name, work):
        if name != "anec-target":
            assert (doc["schema"], doc["schema_version"]) == (name, schema(name)["properties"]["schema_version"]
                                                              ["const"]), what
        validate(name, doc)


def test_every_schema_is_valid_and_exercised():
    names = schema_names()
    assert set(names) == set(CASES) | {"anec-graph"}, "a schema without a test, or a test without a schema"
    for name in names:
        jsonschema.Draft202012Validator.check_schema(schema(name))
        assert schema(name)["$id"] == f"{name}.schema.json"


def test_the_tools_list_the_same_schemas():
    """support/include/anec/support/document.hpp's list (what the tools stamp) against the folder, versions included."""
    listed = dict(re.findall(r'\{"([a-z.-]+)", (\d+)\}', (ROOT / "support" / "include" / "anec" / "support" / "document.hpp").read_text()))
    stamped = {n for n in schema_names() if n not in ("anec-graph", "anec-target")}
    assert set(listed) == stamped
    for name, version in listed.items():
        assert schema(name)["properties"]["schema_version"]["const"] == int(version), name


def test_target_definitions_match_the_target_format():
    for toml in sorted((ROOT / "tables" / "targets").glob("*.toml")):
        validate("anec-target", tomllib.loads(toml.read_text()))


def test_graphs_match_the_graph_format(work):
    tool("anec", "tune", work / "graph.json", "--dim", "N=2", "--target", "h13", "-o", work / "tuned.json")
    tool("anec", "tune", work / "tunable.json", "--target", "h13", "-o", work / "tuned2.json")
    graphs = [GRAPH, TUNABLE] + [json.loads((work / f).read_text()) for f in ("tuned.json", "tuned2.json")]
    graphs += [json.loads(p.read_text()) for p in sorted((ROOT / "fuzz" / "corpus").rglob("*.json"))
               if '"anec-graph"' in p.read_text()]
    assert len(graphs) > 4
    for g in graphs:
        validate("anec-graph", g)


def strict_members(node):
    """The paths to every object the schema closes (additionalProperties false)."""
    if isinstance(node, dict):
        if node.get("additionalProperties") is False and node.get("required"):
            yield node
        for v in node.values():
            yield from strict_members(v)
    elif isinstance(node, list):
        for v in node:
            yield from strict_members(v)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"anec-target"}))
def test_a_changed_document_fails(name, work):
    """The schemas are closed: a member added or removed at the top fails, so a change to an output
    cannot pass without a change to its schema."""
    assert any(strict_members(schema(name))), name
    _, doc = next(documents(name, work))
    added = copy.deepcopy(doc)
    added["unlisted"] = 1
    with pytest.raises(AssertionError):
        validate(name, added)
    for key in schema(name)["required"]:
        removed = {k: v for k, v in doc.items() if k != key}
        with pytest.raises(AssertionError):
            validate(name, removed)


def test_decoded_commands_encode_back(work):
    """anec-fw decode's document, stamp included, is what anec-fw encode reads."""
    for name in ("ping", "inference", "procedure_call"):
        decoded = work / f"{name}.decoded.json"
        decoded.write_text(tool("anec-fw", "decode", work / "fw" / f"{name}.bin", "--format", "json", ok=(0,)))
        tool("anec-fw", "encode", decoded, "-o", work / f"{name}.again.bin", ok=(0,))
        assert (work / f"{name}.again.bin").read_bytes() == (work / "fw" / f"{name}.bin").read_bytes()
