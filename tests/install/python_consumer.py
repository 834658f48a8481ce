"""A consumer of the installed Python package, run by check.cmake with the install prefix's package folder
as its only PYTHONPATH and nothing saying where the tables or the modules are:

    python3 python_consumer.py PREFIX OTHER_TABLES [PROGRAM.hwx]

It imports anec from the prefix, which finds the prefix's tables and modules by itself, checks a model
(an onnx.ModelProto through the prefix's ONNX module when python3-onnx is installed), reads and
re-encodes a program, validates a firmware command, then shows that set_tables and $ANEC_TABLES
still override. Each line it prints is checked by check.cmake."""
import os
import pathlib
import sys

import anec
import anec.fw

prefix, other = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
package = pathlib.Path(anec.__file__).resolve().parent
assert package.is_relative_to(prefix), f"anec imported from {package}, not from {prefix}"
print(f"package: {package}")
print(f"tables: {anec.tables()}")
print(f"modules: {os.environ.get('ANEC_PLUGIN_DIR')}")

graph = b"""{"format": "anec-graph", "version": 1, "inputs": [{"name": "x", "shape": [1, 64, 28, 28]}],
  "ops": [{"name": "act", "op": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]}"""
print(f"{len(anec.targets())} targets; m1 -> {anec.target('m1').name}; "
      f"check on h16: {anec.check(graph, target='h16')['verdict']}")
try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    print("onnx: not installed")
else:
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 4, 4])]),
        opset_imports=[helper.make_opsetid("", 13)])
    print(f"onnx: {anec.check(model, target='h16')['verdict']}")
if len(sys.argv) > 3:
    data = pathlib.Path(sys.argv[3]).read_bytes()
    p = anec.load_program(data)
    print(f"program: {p.container}, {len(p.descriptors)} descriptor(s), "
          f"round trip {'identical' if p.encode() == data else 'DIFFERENT'}")
print(f"fw: {anec.fw.validate(anec.fw.encode({'command': 'PING'})).disposition}")
anec.set_tables(other)
print(f"set_tables: {anec.tables()}")
anec.set_tables(None)
os.environ["ANEC_TABLES"] = str(other)
print(f"ANEC_TABLES: {anec.tables()}")
