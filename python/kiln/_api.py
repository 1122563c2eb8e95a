"""TensorRT's shape of kiln: Logger, Builder, BuilderConfig, OnnxParser, Runtime, engines and
execution contexts. Thin wrappers over kiln._kiln (the bindings of include/kiln/)."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _kiln
from ._kiln import (
    BuilderConfig,
    DataType,
    ICudaEngine,
    IExecutionContext,
    INetworkDefinition,
    Severity,
)

PathLike = Union[str, "os.PathLike[str]"]


class Logger:
    """Where kiln's messages go (TensorRT's trt.Logger). Messages less severe than
    `min_severity` are dropped inside kiln. Subclass and override log() to route them
    elsewhere; the default prints "[kiln] WARNING: ..." to standard error.

    kiln has one logger per process: creating a Builder, Runtime or OnnxParser with a logger
    installs it (as TensorRT's constructors do)."""

    ERROR = Severity.ERROR
    WARNING = Severity.WARNING
    INFO = Severity.INFO
    VERBOSE = Severity.VERBOSE
    Severity = Severity

    def __init__(self, min_severity: Severity = Severity.WARNING):
        self.min_severity = min_severity

    def log(self, severity: Severity, msg: str) -> None:
        print(f"[kiln] {severity.name}: {msg}", file=sys.stderr)


_logger_lock = threading.Lock()
_installed: Optional[Logger] = None


def set_logger(logger: Optional[Logger]) -> None:
    """Installs `logger` for the whole process (None: kiln's default, standard error)."""
    global _installed
    with _logger_lock:
        if logger is None:
            _kiln._set_logger(None)
            _kiln.set_log_severity(Severity.WARNING)
        elif logger is not _installed:
            _kiln._set_logger(logger.log)
            _kiln.set_log_severity(logger.min_severity)
        _installed = logger


def _reset_logger() -> None:
    # At exit the Python logger goes away before kiln's last messages could reach it.
    _kiln._set_logger(None)


atexit.register(_reset_logger)


def _use(logger: Optional[Logger]) -> None:
    if logger is not None:
        set_logger(logger)


ProgressCallback = Callable[[str, int, int, str], Optional[bool]]


class Builder:
    """Builds networks into plan bytes (TensorRT's trt.Builder)::

        builder = kiln.Builder(logger)
        network = builder.create_network()
        kiln.OnnxParser(network).parse_from_file("model.onnx")
        config = builder.create_builder_config()
        config.target = "cuda"; config.fp16 = True
        plan = builder.build_serialized_network(network, config)   # bytes

    The build releases the GIL (other Python threads run meanwhile) and stops with
    kiln.CancelledError on Ctrl-C, or when config.progress returns False."""

    def __init__(self, logger: Optional[Logger] = None):
        _use(logger)
        self.logger = logger

    def create_network(self, flags: int = 0) -> INetworkDefinition:
        """An empty network (flags are accepted for TensorRT compatibility and ignored: kiln's
        networks always have explicit batch)."""
        return _kiln._create_network()

    def create_builder_config(self) -> BuilderConfig:
        return BuilderConfig()

    def build_serialized_network(
        self, network: INetworkDefinition, config: Optional[BuilderConfig] = None
    ) -> bytes:
        """Plan bytes for `network`, or a kiln.Error naming the layer that failed."""
        return _kiln._build_serialized_network(network, config or BuilderConfig())


def _profiles(profiles) -> List[Dict[str, List[List[int]]]]:
    """[{name: (min, opt, max)}] as the binding takes it: lists of ints."""
    return [{name: [[int(d) for d in shape] for shape in rng] for name, rng in p.items()}
            for p in (profiles or [])]


class OnnxParser:
    """Reads an ONNX model into a network (TensorRT's trt.OnnxParser). parse*() return True on
    success; on failure False, with the errors in .errors (kiln.Error instances, each with kiln's
    message naming the node: "node 12 'crop' (CropAndResize): ...").

    input_shapes ({name: shape}) gives the shape to build for where a graph input has symbolic
    dims (torch.onnx.export's dynamic_axes); dims the model fixes must match it. profiles keeps
    those dims dynamic instead: a list, per optimization profile, of {name: (min, opt, max)}
    shapes; give the builder config the same (BuilderConfig.profiles). shape_values ({name:
    [int, ...]}) builds an INT32/INT64 input that a node reads as a shape operand (a Reshape's
    shape, Slice bounds, ...) for those values: it stays an input, read from host memory, and
    must hold them at run time."""

    def __init__(self, network: INetworkDefinition, logger: Optional[Logger] = None,
                 input_shapes: Optional[Dict[str, Sequence[int]]] = None,
                 profiles: Optional[Sequence[Dict[str, Sequence[Sequence[int]]]]] = None,
                 shape_values: Optional[Dict[str, Sequence[int]]] = None):
        if not _kiln.HAVE_ONNX:
            raise _kiln.UnsupportedError(
                "this kiln was built without the ONNX parser (it needs Debian's libonnx-dev and "
                "libprotobuf-dev at build time); load plans instead")
        _use(logger)
        self.network = network
        self.input_shapes = {k: [int(d) for d in v] for k, v in (input_shapes or {}).items()}
        self.profiles = _profiles(profiles)
        self.shape_values = {k: [int(v) for v in vs] for k, vs in (shape_values or {}).items()}
        self.errors: List[_kiln.Error] = []

    def _done(self, error: Optional[_kiln.Error]) -> bool:
        if error is None:
            return True
        self.errors.append(error)
        return False

    def parse_from_file(self, path: PathLike) -> bool:
        return self._done(
            _kiln._parse_onnx_file(self.network, os.fspath(path), self.input_shapes,
                                   self.profiles, self.shape_values))

    def parse(self, model: bytes, path: str = "<bytes>") -> bool:
        return self._done(
            _kiln._parse_onnx_bytes(self.network, model, path, self.input_shapes, self.profiles,
                                    self.shape_values))

    @property
    def num_errors(self) -> int:
        return len(self.errors)

    def get_error(self, index: int) -> _kiln.Error:
        return self.errors[index]

    def clear_errors(self) -> None:
        self.errors.clear()

    @staticmethod
    def supported_ops() -> List[str]:
        """The ONNX op types kiln imports itself; any other op type is looked up in the plugin
        registry."""
        return list(_kiln.onnx_supported_ops()) if _kiln.HAVE_ONNX else []


class Runtime:
    """Loads plans into engines (TensorRT's trt.Runtime). A plan whose plugins are not
    registered, or that is truncated, corrupt or for another target, raises kiln.Error saying
    what is wrong and what to do."""

    def __init__(self, logger: Optional[Logger] = None):
        _use(logger)

    def deserialize_engine(self, plan: Any) -> ICudaEngine:
        """An engine from plan bytes (bytes, bytearray, memoryview or a uint8 NumPy array)."""
        return _kiln._deserialize_engine(plan)

    # TensorRT's older name.
    deserialize_cuda_engine = deserialize_engine


def _engine_io(engine: ICudaEngine) -> List[str]:
    return [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]


# TensorRT-style conveniences on the bound classes.
ICudaEngine.io_tensor_names = property(_engine_io, doc="Every input and output name, inputs first.")
ICudaEngine.__len__ = lambda self: self.num_io_tensors
IExecutionContext.execute_async_v3 = lambda self, stream_handle=0: self.execute_async(stream_handle)
IExecutionContext.execute_async_v3.__doc__ = "TensorRT's name for execute_async."
