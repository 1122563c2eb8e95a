"""kiln: an inference engine in the mould of TensorRT, from Python.

Two levels, both over kiln's C++ API:

onnxruntime's shape::

    import kiln, numpy as np
    sess = kiln.InferenceSession("model.onnx", device="cpu")        # or "cuda", fp16=True
    print(sess.get_inputs()[0].name, sess.get_inputs()[0].shape)
    (y,) = sess.run(None, {"x": np.random.rand(1, 3, 224, 224).astype(np.float32)})

TensorRT's shape::

    logger = kiln.Logger(kiln.Logger.WARNING)
    builder = kiln.Builder(logger)
    network = builder.create_network()
    parser = kiln.OnnxParser(network, logger)
    if not parser.parse_from_file("model.onnx"):
        raise parser.get_error(0)
    config = builder.create_builder_config()
    plan = builder.build_serialized_network(network, config)
    engine = kiln.Runtime(logger).deserialize_engine(plan)
    context = engine.create_execution_context()
    context.set_tensor_address("x", x)          # an int address or an array on the device
    context.set_tensor_address("y", y)
    context.execute_async(stream)               # int, torch.cuda.Stream, cupy Stream

Plugins: kiln.load_plugin_library(path), kiln.registered_plugins(), `with kiln.trace(path):`,
kiln.check_plugin(...). Errors: kiln.Error and its subclasses, with kiln's message.
"""

from . import _kiln
from ._kiln import (
    BuilderConfig,
    CancelledError,
    CorruptDataError,
    DataType,
    Device,
    DeviceBuffer,
    DeviceError,
    DeviceKind,
    DeviceStream,
    Error,
    ICudaEngine,
    IExecutionContext,
    ILayer,
    INetworkDefinition,
    InternalError,
    InvalidArgumentError,
    IoError,
    ITensor,
    NotFoundError,
    PluginError,
    Severity,
    Tensor,
    TensorFormat,
    TensorIOMode,
    UnsupportedError,
    __version__,
    data_type_name,
    data_type_size,
    device_count,
    get_log_severity,
    inspect_plan,
    layer_parameters,
    set_log_severity,
)
from ._api import Builder, Logger, OnnxParser, Runtime, set_logger
from ._interop import from_numpy_dtype, nptype
from .plugins import (
    BUILTIN_PLUGINS,
    PluginCheckReport,
    Trace,
    check_plugin,
    init_plugins,
    load_plugin_library,
    registered_plugins,
    trace,
)
from .session import InferenceSession, NodeArg, progress_bar

HAVE_ONNX: bool = _kiln.HAVE_ONNX
"""Whether this kiln was built with the ONNX parser."""

# TensorRT's type names.
float32 = DataType.FLOAT
float16 = DataType.HALF
bfloat16 = DataType.BF16
int8 = DataType.INT8
int32 = DataType.INT32
int64 = DataType.INT64
bool_ = DataType.BOOL


def has_cuda() -> bool:
    """Whether kiln can run on a CUDA GPU here (built with CUDA, and a GPU is visible)."""
    return device_count("cuda")[0] > 0


__all__ = [n for n in dir() if not n.startswith("_")]
