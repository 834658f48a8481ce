"""What the test files share: the tools to compare with (ANEC_TEST_TOOLS_DIR, set by ctest) and an
ONNX model built with onnx.helper."""
import json
import os
import subprocess

import numpy as np
import pytest

TOOLS = os.environ.get("ANEC_TEST_TOOLS_DIR")
needs_tools = pytest.mark.skipif(not TOOLS, reason="ANEC_TEST_TOOLS_DIR is not set (run from ctest)")


def run_tool(tool, *args):
    """The tool's exit code, stdout and stderr."""
    out = subprocess.run([os.path.join(TOOLS, tool), *map(str, args)], capture_output=True, text=True)
    return out.returncode, out.stdout, out.stderr


def tool_json(tool, *args):
    """The document a tool prints with --format json (exit 0, or 1 for a verdict)."""
    rc, out, err = run_tool(tool, *args)
    assert rc in (0, 1), err
    return json.loads(out)


def without_version(doc):
    return {k: v for k, v in doc.items() if k != "schema_version"}


def conv_relu_model():
    """An onnx.ModelProto made by onnx.helper: relu(conv1x1(x, W) + b), W and b as initializers;
    returns the model, W and b."""
    onnx = pytest.importorskip("onnx", reason="Debian's python3-onnx is not installed")
    from onnx import TensorProto, helper, numpy_helper
    w = (np.arange(32, dtype=np.float32).reshape(4, 8, 1, 1) - 16) / 8
    b = np.array([0.5, -0.5, 1, -1], np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[1, 1]),
         helper.make_node("Relu", ["c"], ["y"])], "conv_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model, w, b


def conv_relu_reference(x, w, b):
    """What conv_relu_model computes, in NumPy."""
    return np.maximum(np.einsum("oc,nchw->nohw", w[:, :, 0, 0], x) + b[None, :, None, None], 0)
