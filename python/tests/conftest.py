"""Shared fixtures: small ONNX models made with the onnx package (fresh random weights each run),
the demo detector shipped in models/, and kiln's command line (the C++ API's results)."""

import os
import subprocess

import numpy as np
import pytest

import kiln

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO = os.path.join(REPO, "models", "demo_detector.onnx")

try:  # the onnx package makes the test models; kiln's ONNX parser reads them
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # pragma: no cover - the GPU machine has no onnx package
    onnx = None

HAVE_ONNX = kiln.HAVE_ONNX and onnx is not None
needs_onnx = pytest.mark.skipif(not HAVE_ONNX, reason="kiln built without the ONNX parser, or no "
                                "onnx package to make test models")


def rng():
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def mlp_model(path, r, batch=2, features=16, hidden=32, classes=10):
    """x [batch, features] -> MatMul + Add -> Relu -> MatMul + Add -> Softmax -> y."""
    w1 = r.standard_normal((features, hidden)).astype(np.float32)
    b1 = r.standard_normal(hidden).astype(np.float32)
    w2 = r.standard_normal((hidden, classes)).astype(np.float32)
    b2 = r.standard_normal(classes).astype(np.float32)
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w1"], ["h0"]),
            helper.make_node("Add", ["h0", "b1"], ["h1"]),
            helper.make_node("Relu", ["h1"], ["h2"]),
            helper.make_node("MatMul", ["h2", "w2"], ["h3"]),
            helper.make_node("Add", ["h3", "b2"], ["logits"]),
            helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
        ],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, classes]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2")],
    )
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def conv_model(path, r, layers=2, channels=8, size=16):
    """x [1, 3, size, size] -> (Conv 3x3 + Relu) x layers -> GlobalAveragePool -> y."""
    nodes, inits = [], []
    prev, c_in = "x", 3
    for i in range(layers):
        w = (r.standard_normal((channels, c_in, 3, 3)) * 0.3).astype(np.float32)
        b = r.standard_normal(channels).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"c{i}"],
                                      pads=[1, 1, 1, 1], kernel_shape=[3, 3]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        prev, c_in = f"r{i}", channels
    nodes.append(helper.make_node("GlobalAveragePool", [prev], ["y"]))
    g = helper.make_graph(
        nodes, "convnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 1, 1])], inits)
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def unknown_op_model(path):
    """One node of an op type nothing registers: the parser asks the plugin registry."""
    g = helper.make_graph(
        [helper.make_node("NoSuchPluginOp", ["x"], ["y"], domain="kiln")], "missing_plugin",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("kiln", 1)]), path)


@pytest.fixture
def r():
    return rng()


@pytest.fixture
def mlp(tmp_path, r):
    if not HAVE_ONNX:
        pytest.skip("no ONNX")
    return mlp_model(tmp_path / "mlp.onnx", r)


@pytest.fixture
def convnet(tmp_path, r):
    if not HAVE_ONNX:
        pytest.skip("no ONNX")
    return conv_model(tmp_path / "conv.onnx", r)


@pytest.fixture(scope="session")
def kiln_cli():
    """kiln's command line: the one installed with the package (same libraries), or $KILN_CLI."""
    path = os.environ.get("KILN_CLI") or os.path.join(os.path.dirname(kiln.__file__), "bin", "kiln")
    if not os.path.exists(path):
        pytest.skip(f"kiln's command line is not at {path}")
    return path


def run_cli(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def passthrough_network(dtype, shape=(2, 3)):
    """A network of one input of `dtype` whose output is the input concatenated with itself
    along axis 0 (a layer every type goes through unchanged)."""
    builder = kiln.Builder()
    net = builder.create_network()
    x = net.add_input("x", dtype, list(shape))
    layer = net.add_layer("Concatenation", [x, x], axis=0)
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    return builder.build_serialized_network(net, builder.create_builder_config())


def random_of(dtype, shape, r):
    np_dtype = kiln.nptype(dtype)
    if dtype == kiln.DataType.BOOL:
        return r.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        return r.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(np_dtype)
    return r.standard_normal(shape).astype(np.float32).astype(np_dtype)


ALL_TYPES = [kiln.DataType.FLOAT, kiln.DataType.HALF, kiln.DataType.BF16, kiln.DataType.INT8,
             kiln.DataType.INT32, kiln.DataType.INT64, kiln.DataType.BOOL]
