"""TensorRT's shape of kiln: Logger, Builder, BuilderConfig, network, OnnxParser, Runtime,
engine queries, execution contexts; and the error classes."""

import threading

import numpy as np
import pytest

import kiln
from conftest import needs_onnx, passthrough_network


class ListLogger(kiln.Logger):
    def __init__(self, severity):
        super().__init__(severity)
        self.messages = []
        self.lock = threading.Lock()

    def log(self, severity, msg):
        with self.lock:
            self.messages.append((severity, msg))


def test_error_classes_follow_the_status_codes():
    assert issubclass(kiln.InvalidArgumentError, kiln.Error)
    assert issubclass(kiln.InvalidArgumentError, ValueError)
    assert issubclass(kiln.NotFoundError, LookupError)
    assert issubclass(kiln.UnsupportedError, NotImplementedError)
    for cls in (kiln.CorruptDataError, kiln.PluginError, kiln.IoError, kiln.InternalError,
                kiln.DeviceError, kiln.CancelledError):
        assert issubclass(cls, kiln.Error)
    assert kiln.NotFoundError.code == "not found"
    assert kiln.Error.__doc__


@needs_onnx
def test_the_tensorrt_flow_from_onnx_to_outputs(mlp, r):
    logger = ListLogger(kiln.Logger.INFO)
    builder = kiln.Builder(logger)
    network = builder.create_network()
    parser = kiln.OnnxParser(network, logger)
    assert parser.parse_from_file(mlp), parser.errors
    assert parser.num_errors == 0
    assert network.num_inputs == 1 and network.num_outputs == 2 and network.num_layers > 0
    assert network.get_input(0).name == "x" and network.get_input(0).shape == (2, 16)
    config = builder.create_builder_config()
    config.verbose = True
    assert config.target == "cpu" and not config.fp16
    plan = builder.build_serialized_network(network, config)
    assert isinstance(plan, bytes) and plan[:8] == b"KILNPLAN"
    assert any("chose" in m or "tactic" in m for _, m in logger.messages), logger.messages[:5]
    kiln.set_logger(None)

    engine = kiln.Runtime().deserialize_engine(plan)
    assert engine.num_io_tensors == 3 and engine.io_tensor_names == ["x", "y", "logits"]
    assert engine.get_tensor_mode("x") == kiln.TensorIOMode.INPUT
    assert engine.get_tensor_mode("y") == kiln.TensorIOMode.OUTPUT
    assert engine.get_tensor_shape("y") == (2, 10)
    assert engine.get_tensor_dtype("y") == kiln.float32
    assert engine.get_tensor_format("y") == kiln.TensorFormat.LINEAR
    assert engine.target == "cpu" and engine.device.kind == kiln.DeviceKind.CPU
    assert '"layers"' in engine.inspect() or "layers" in engine.inspect()
    with pytest.raises(kiln.NotFoundError, match="no input or output 'q'"):
        engine.get_tensor_shape("q")

    context = engine.create_execution_context()
    x = r.standard_normal((2, 16)).astype(np.float32)
    y = np.empty((2, 10), np.float32)
    logits = np.empty((2, 10), np.float32)
    context.set_tensor_address("x", x)                    # an array
    context.set_tensor_address("y", y)
    context.set_tensor_address("logits", logits.ctypes.data)  # or an address
    assert context.get_tensor_address("x") == x.ctypes.data
    assert context.get_tensor_address("logits") == logits.ctypes.data

    class Stream:  # anything with .cuda_stream (torch) or .ptr (CuPy) is a stream
        cuda_stream = 0

    context.execute_async(Stream())
    context.execute_async_v3(0)
    want = kiln.InferenceSession(plan).run(None, {"x": x})
    np.testing.assert_array_equal(y, want[0])
    np.testing.assert_array_equal(logits, want[1])
    with pytest.raises(kiln.InvalidArgumentError, match="stream"):
        context.execute_async("not a stream")


@needs_onnx
def test_a_failing_parse_returns_false_with_the_errors(tmp_path):
    network = kiln.Builder().create_network()
    parser = kiln.OnnxParser(network)
    assert not parser.parse(b"this is not an onnx model", "junk.onnx")
    assert parser.num_errors == 1
    e = parser.get_error(0)
    assert isinstance(e, kiln.Error) and "junk.onnx" in str(e)
    assert not parser.parse_from_file(tmp_path / "absent.onnx")
    assert "absent.onnx" in str(parser.get_error(1))
    assert "Conv" in kiln.OnnxParser.supported_ops()


def test_networks_by_hand_with_every_builtin_layer_by_name(r):
    params = kiln.layer_parameters()
    assert "Convolution" in params and params["Activation"]["alpha"] == 0.0
    builder = kiln.Builder()
    net = builder.create_network()
    x = net.add_input("x", kiln.float32, [1, 2, 5, 5])
    w = r.standard_normal((4, 2, 3, 3)).astype(np.float32)
    kernel = net.add_constant(w).get_output(0)
    conv = net.add_layer("Convolution", [x, kernel], out_channels=4, kernel_h=3, kernel_w=3,
                         pad_top=1, pad_left=1, pad_bottom=1, pad_right=1)
    assert conv.type == "Convolution" and conv.get_output(0).shape == (1, 4, 5, 5)
    relu = net.add_layer("Activation", [conv.get_output(0)], type=0)
    relu.name = "relu"
    relu.get_output(0).name = "y"
    net.mark_output(relu.get_output(0))
    plan = builder.build_serialized_network(net, builder.create_builder_config())
    xv = r.standard_normal((1, 2, 5, 5)).astype(np.float32)
    (y,) = kiln.InferenceSession(plan).run(None, {"x": xv})
    # The same by NumPy: a 3x3 same-padded convolution, then ReLU.
    pad = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 4, 5, 5), np.float64)
    for i in range(5):
        for j in range(5):
            want[0, :, i, j] = np.tensordot(w, pad[0, :, i:i + 3, j:j + 3], axes=3)
    np.testing.assert_allclose(y, np.maximum(want, 0), rtol=1e-4, atol=1e-5)

    with pytest.raises(kiln.InvalidArgumentError, match="no parameter 'bogus'"):
        net.add_layer("Activation", [x], bogus=1)
    with pytest.raises(kiln.NotFoundError, match="no built-in layer 'Nope'"):
        net.add_layer("Nope", [x])


def test_a_bad_network_raises_at_the_layer_and_at_build():
    builder = kiln.Builder()
    net = builder.create_network()
    a = net.add_input("a", kiln.float32, [2, 3])
    b = net.add_input("b", kiln.float32, [4, 5])
    with pytest.raises(kiln.Error):
        net.add_layer("MatrixMultiply", [a, b])
    with pytest.raises(kiln.Error, match="errors|no outputs"):
        builder.build_serialized_network(net, builder.create_builder_config())
    with pytest.raises(kiln.InvalidArgumentError, match="taken"):
        b.name = "a"


def test_builder_config_and_bad_targets():
    config = kiln.BuilderConfig()
    config.target = "tpu"
    config.timing_runs = 3
    config.fp16 = True
    assert (config.target, config.timing_runs, config.fp16) == ("tpu", 3, True)
    builder = kiln.Builder()
    net = builder.create_network()
    x = net.add_input("x", kiln.float32, [2])
    layer = net.add_layer("Activation", [x])
    net.mark_output(layer.get_output(0))
    with pytest.raises(kiln.Error, match="tpu"):
        builder.build_serialized_network(net, config)


def test_the_device_api_copies_and_streams():
    engine = kiln.Runtime().deserialize_engine(passthrough_network(kiln.float32))
    dev = engine.device
    assert (dev.kind, dev.index, dev.name) == (kiln.DeviceKind.CPU, 0, "cpu")
    buf = dev.allocate(24)
    src = np.arange(6, dtype=np.float32)
    dev.copy_from_host(buf.ptr, src)
    back = np.empty(6, np.float32)
    dev.copy_to_host(back, buf.ptr)
    np.testing.assert_array_equal(back, src)
    s = dev.create_stream()
    s.synchronize()
    assert s.handle == 0  # CPU streams are null
    assert kiln.device_count("cpu")[0] == 1
    n, why = kiln.device_count("cuda")
    assert n > 0 or why


def test_dtypes_map_to_numpy_both_ways():
    assert kiln.nptype(kiln.float16) == np.float16
    assert kiln.from_numpy_dtype(np.int64) == kiln.int64
    assert kiln.from_numpy_dtype("bool") == kiln.bool_
    with pytest.raises(kiln.InvalidArgumentError):
        kiln.from_numpy_dtype(np.complex64)
