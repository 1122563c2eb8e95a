"""onnxruntime's shape of kiln: InferenceSession, and kiln.Tensor's Python protocols."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _interop, _kiln
from ._api import Builder, Logger, OnnxParser, Runtime, set_logger
from ._interop import _BFLOAT16 as _BF16
from ._interop import CudaArrayView, nptype, same_stream, stream_handle
from ._kiln import DataType, DeviceKind, Tensor

PLAN_MAGIC = b"KILNPLAN"


# ---- kiln.Tensor ----------------------------------------------------------------------------------


def _tensor_dlpack(self: Tensor, *, stream: Optional[int] = None, max_version=None,
                   dl_device=None, copy=None):
    """DLPack export (the array API's __dlpack__). A tensor produced on a user's stream is in
    that stream's order: take it on the same stream (torch.from_dlpack inside
    `with torch.cuda.stream(s)`), or synchronize that stream first."""
    if self.stream and not same_stream(self.stream, stream):
        raise _kiln.UnsupportedError(
            f"this tensor was produced on stream {self.stream:#x} and is asked for on stream "
            f"{stream:#x}: kiln has no cross-stream events yet; consume it on the stream run() "
            "was given, or run with stream=None (kiln then synchronizes before returning)")
    kwargs = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return self._view().__dlpack__(**kwargs)


def _tensor_numpy(self: Tensor) -> np.ndarray:
    """A NumPy copy on the host (for CUDA tensors, a device-to-host copy that waits for it)."""
    try:
        dtype = nptype(self.dtype)
    except _kiln.UnsupportedError:
        dtype = np.dtype(np.uint16)  # bf16 without ml_dtypes: the raw bits
    out = np.empty(self.shape, dtype)
    self._copy_to_host(out)
    return out


def _tensor_array(self: Tensor, dtype=None, copy=None) -> np.ndarray:
    a = self.numpy()
    return a if dtype is None else a.astype(dtype, copy=False)


def _tensor_cai(self: Tensor) -> dict:
    if self.device == "cpu":
        raise AttributeError("__cuda_array_interface__: a CPU tensor has none")
    typestr = {DataType.FLOAT: "<f4", DataType.HALF: "<f2", DataType.INT8: "|i1",
               DataType.INT32: "<i4", DataType.INT64: "<i8", DataType.BOOL: "|b1",
               DataType.BF16: "<V2"}[self.dtype]
    cai = {"shape": self.shape, "typestr": typestr, "data": (self.data_ptr, False),
           "version": 3, "strides": None}
    if self.stream:
        cai["stream"] = self.stream
    return cai


def _tensor_repr(self: Tensor) -> str:
    return (f"kiln.Tensor(shape={self.shape}, dtype={_kiln.data_type_name(self.dtype)}, "
            f"device='{self.device}')")


Tensor.__dlpack__ = _tensor_dlpack
Tensor.numpy = _tensor_numpy
Tensor.__array__ = _tensor_array
Tensor.__cuda_array_interface__ = property(_tensor_cai)
Tensor.__repr__ = _tensor_repr


# ---- progress -------------------------------------------------------------------------------------


def progress_bar(stream=None, width: int = 30):
    """A build progress callback that draws a bar on standard error:
    `[kiln] tactics [#######-------] 12/40 conv3`. Pass it as BuilderConfig.progress or
    InferenceSession(progress=True)."""
    out = stream or sys.stderr
    tty = getattr(out, "isatty", lambda: False)()
    start = time.monotonic()

    def callback(phase: str, done: int, total: int, layer: str) -> bool:
        filled = int(width * done / max(total, 1))
        bar = "#" * filled + "-" * (width - filled)
        line = f"[kiln] {phase:<7} [{bar}] {done}/{total} {layer}"[:100]
        if tty:
            out.write("\r" + line.ljust(100))
            if phase == "plan":
                out.write(f"\n[kiln] built in {time.monotonic() - start:.1f} s\n")
        elif done == total:
            out.write(line + "\n")
        out.flush()
        return True

    return callback


# ---- InferenceSession -----------------------------------------------------------------------------


class NodeArg:
    """An input or output of a session, as onnxruntime describes one: name, shape, type
    ("tensor(float)"), plus dtype (NumPy) and kiln_dtype."""

    __slots__ = ("name", "shape", "type", "dtype", "kiln_dtype")

    def __init__(self, name: str, shape, kiln_dtype: DataType):
        self.name = name
        self.shape = list(shape)
        self.kiln_dtype = kiln_dtype
        self.type = _interop.ort_type_name(kiln_dtype)
        try:
            self.dtype = nptype(kiln_dtype)
        except _kiln.UnsupportedError:
            self.dtype = None

    def __repr__(self) -> str:
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


class _Slot:
    """One execution context of a session and what it keeps between runs: its stream, and
    scratch memory for outputs nobody asked for and for staging host data on a GPU."""

    def __init__(self, engine: _kiln.ICudaEngine, cuda: bool, cuda_graphs: Optional[bool] = None):
        self.context = engine.create_execution_context()
        if cuda_graphs is not None:
            self.context.set_cuda_graphs(cuda_graphs)
        self.stream = engine.device.create_stream() if cuda else None
        self.stream_handle = self.stream.handle if cuda else 0
        self.scratch: Dict[str, Any] = {}
        self.shapes: Optional[Dict[str, tuple]] = None  # input shapes set (dynamic engines)

    def buffer(self, engine: _kiln.ICudaEngine, name: str, shape: Optional[tuple] = None) -> int:
        b = self.scratch.get(name)
        if b is None or (shape is not None and tuple(b.shape) != shape):
            b = self.scratch[name] = engine._empty_tensor(name, shape)
        return b.data_ptr


def _load_plugins(plugins: Iterable[Any]) -> None:
    for p in plugins:
        _kiln.load_plugin_library(os.fspath(p))


class InferenceSession:
    """Runs an ONNX model or a kiln plan, the way onnxruntime.InferenceSession does.

    InferenceSession(path_or_bytes, device="cpu", fp16=False, plugins=[...]) parses and builds
    an ONNX model for `device` ("cpu", "cuda" or "cuda:N"; fp16: built-in layers compute in FP16
    on CUDA), or loads a plan (bytes or a file starting with kiln's plan magic) as it is.
    `plugins` are plugin library paths loaded first (kiln.BUILTIN_PLUGINS is kiln's own, with
    CropAndResize). The build releases the GIL; progress=True draws a progress bar (or give a
    callback fn(phase, done, total, layer)); timing_cache=PATH reuses tactic timings.
    input_shapes={name: shape} builds a model with symbolic input dims (dynamic_axes) for those
    shapes; without them such a model is refused with a message naming the input and axis.
    profiles=[{name: (min, opt, max)}, ...] builds it once for every shape in those ranges (one
    optimization profile per dict, TensorRT's rules): run() then takes inputs of any shape inside
    one profile, picks the profile, and gives outputs of the shapes that follow; get_inputs()
    shows -1 where a dim varies. shape_values={name: [int, ...]} builds an integer input that a
    node reads as a shape operand (Reshape's shape, Slice's bounds, ...) for those values, as
    kiln run --onnx --shape-values does: run() must then feed those values (kiln reads them on
    the host; others raise). cuda_graphs=True (CUDA) has each execution context keep a CUDA
    graph per input shapes and buffers (IExecutionContext.set_cuda_graphs). NumPy runs, whose
    device buffers the session keeps, go layer by layer the first time, capture the graph the
    second and replay it after. The default (None) is the engine's: graphs for plugin-free CUDA
    plans, given up where shapes or buffers keep changing; False runs layer by layer.

    get_inputs()/get_outputs() describe the I/O tensors (name, shape, type).
    run(output_names, {name: array}) runs the model and returns the outputs named (all when
    output_names is None), in that order:
      - NumPy arrays in: NumPy arrays out (on a CUDA session, copied to and from the GPU).
      - Any other array in (anything with __dlpack__ or __cuda_array_interface__: torch, CuPy,
        JAX), taken without a copy on its own device: outputs come back as kiln.Tensor objects
        on the session's device, which torch.from_dlpack() / np.from_dlpack() / cupy take
        without a copy, and .numpy() copies to the host.
      - stream=S (an int cudaStream_t, torch.cuda.Stream, cupy Stream): inputs are taken in
        S's order (through __dlpack__(stream=S)), the work is enqueued on S and run() returns
        without waiting; outputs are valid in S's order. Without it, kiln runs on its own stream
        and waits before returning, so outputs are ready on any stream.
    Any error (wrong shape or dtype, unknown name, missing plugin, corrupt plan) raises a
    kiln.Error subclass with kiln's message. One session may be run from several threads at
    once: each concurrent run gets an execution context of its own."""

    def __init__(
        self,
        path_or_bytes: Union[str, "os.PathLike[str]", bytes],
        device: str = "cpu",
        fp16: bool = False,
        plugins: Sequence[Any] = (),
        *,
        timing_cache: Optional[str] = None,
        input_shapes: Optional[Dict[str, Sequence[int]]] = None,
        profiles: Optional[Sequence[Dict[str, Sequence[Sequence[int]]]]] = None,
        shape_values: Optional[Dict[str, Sequence[int]]] = None,
        cuda_graphs: Optional[bool] = None,
        verbose: bool = False,
        progress: Any = None,
        logger: Optional[Logger] = None,
        providers: Any = None,
        sess_options: Any = None,
        provider_options: Any = None,
    ):
        if logger is not None:
            set_logger(logger)
        _load_plugins(plugins)
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            data, source = bytes(path_or_bytes), "<bytes>"
        else:
            source = os.fspath(path_or_bytes)
            if not os.path.exists(source):
                raise _kiln.NotFoundError(f"no such file: '{source}'")
            with open(source, "rb") as f:
                data = f.read()
        if data[: len(PLAN_MAGIC)] == PLAN_MAGIC:
            self.plan = data
        else:
            self.plan = self._build(data, source, device, fp16, timing_cache, verbose, progress,
                                    input_shapes, profiles, shape_values)
        self._engine = Runtime().deserialize_engine(self.plan)
        self._cuda = self._engine.device.kind == DeviceKind.CUDA
        if cuda_graphs and not self._cuda:
            raise _kiln.UnsupportedError(
                "cuda_graphs=True needs a CUDA session (device='cuda'): CUDA graphs are a CUDA "
                "engine's")
        self._cuda_graphs = cuda_graphs
        if device.startswith("cuda") != self._cuda:
            raise _kiln.InvalidArgumentError(
                f"the plan is for '{self._engine.target}' but device='{device}' was asked for; a "
                "plan runs where it was built for (build the ONNX model for that device instead)")
        e = self._engine
        names = e.io_tensor_names
        self._inputs = [NodeArg(n, e.get_tensor_shape(n), e.get_tensor_dtype(n)) for n in names
                        if e.get_tensor_mode(n) == _kiln.TensorIOMode.INPUT]
        self._outputs = [NodeArg(n, e.get_tensor_shape(n), e.get_tensor_dtype(n)) for n in names
                         if e.get_tensor_mode(n) == _kiln.TensorIOMode.OUTPUT]
        self._input_args = {a.name: a for a in self._inputs}
        self._output_args = {a.name: a for a in self._outputs}
        self._output_names = [a.name for a in self._outputs]
        self._input_keys = set(self._input_args)
        # Shape-value inputs: read by kiln from host memory on every device.
        self._host_inputs = {a.name for a in self._inputs if e.is_shape_value_input(a.name)}
        # name -> (shape, NumPy dtype) for outputs NumPy can hold through DLPack (not bf16).
        self._output_specs = {
            a.name: (tuple(a.shape), a.dtype if a.dtype is not None and
                     (_BF16 is None or a.dtype != _BF16) else None) for a in self._outputs}
        self._free: List[_Slot] = []
        # Dynamic inputs: each run sets the shapes it is given (and picks a profile for them).
        self._dynamic = [a.name for a in self._inputs if any(d < 0 for d in a.shape)]
        self._ranges = [{n: e.get_tensor_profile_shape(n, p) for n in self._dynamic}
                        for p in range(e.num_optimization_profiles)] if self._dynamic else []

    @staticmethod
    def _build(data, source, device, fp16, timing_cache, verbose, progress,
               input_shapes, profiles, shape_values) -> bytes:
        builder = Builder()
        network = builder.create_network()
        parser = OnnxParser(network, input_shapes=input_shapes, profiles=profiles,
                            shape_values=shape_values)
        if not parser.parse(data, source):
            raise parser.get_error(0)
        config = builder.create_builder_config()
        config.profiles = parser.profiles
        config.target = device
        config.fp16 = fp16
        config.verbose = verbose
        if timing_cache:
            config.timing_cache = os.fspath(timing_cache)
        if progress is True:
            config.progress = progress_bar()
        elif progress:
            config.progress = progress
        return builder.build_serialized_network(network, config)

    # -- what onnxruntime users ask a session --

    def get_inputs(self) -> List[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs)

    def get_providers(self) -> List[str]:
        return ["CUDAExecutionProvider"] if self._cuda else ["CPUExecutionProvider"]

    @property
    def engine(self) -> _kiln.ICudaEngine:
        """The kiln engine (TensorRT-style API) underneath."""
        return self._engine

    @property
    def device(self) -> str:
        return self._engine.device.name

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the plan, which InferenceSession(path) loads again without building."""
        with open(path, "wb") as f:
            f.write(self.plan)

    # -- running --

    def run(
        self,
        output_names: Optional[Sequence[str]],
        input_feed: Mapping[str, Any],
        run_options: Any = None,
        *,
        stream: Any = None,
        output_type: Optional[str] = None,
    ) -> List[Any]:
        """Runs the model (see the class's help): NumPy in, NumPy out; DLPack or
        __cuda_array_interface__ in, kiln.Tensor out; stream=S to run in a user's stream order.
        output_type="numpy" or "tensor" overrides the choice of output kind."""
        if input_feed.keys() != self._input_keys:
            self._feed_error(input_feed)
        if output_names is None:
            names = self._output_names
        else:
            names = output_names
            for n in names:
                if n not in self._output_args:
                    raise _kiln.NotFoundError(
                        f"the model has no output '{n}' (it has "
                        f"{', '.join(repr(o) for o in self._output_names)})")
        # A context per concurrent run: list.pop() and append() are atomic, so no lock.
        try:
            slot = self._free.pop()
        except IndexError:
            slot = _Slot(self._engine, self._cuda, self._cuda_graphs)
        try:
            if self._dynamic:
                self._set_shapes(slot, input_feed)
            if self._cuda:
                return self._run_cuda(slot, names, input_feed, stream, output_type)
            return self._run_cpu(slot, names, input_feed, output_type)
        finally:
            self._free.append(slot)

    def _set_shapes(self, slot: _Slot, feed: Mapping[str, Any]) -> None:
        """Sets the dynamic inputs' shapes on the slot's context, in a profile that takes them
        (the one it has when that does): kernels for new shapes are made here, once."""
        shapes = {}
        for n in self._dynamic:
            value = feed[n]
            shape = getattr(value, "shape", None)
            if shape is None and hasattr(value, "__cuda_array_interface__"):
                shape = value.__cuda_array_interface__["shape"]
            if shape is None:
                shape = np.shape(value)
            shapes[n] = tuple(int(d) for d in shape)
        if shapes == slot.shapes:
            return
        ctx = slot.context
        slot.shapes = None
        fits = lambda p: all(
            len(s) == len(self._ranges[p][n][0]) and
            all(lo <= d <= hi for d, lo, hi in zip(s, self._ranges[p][n][0], self._ranges[p][n][2]))
            for n, s in shapes.items())
        now = ctx.active_optimization_profile
        if not fits(now):
            # None fits: the current one's error names input, axis, value and range.
            chosen = next((p for p in range(len(self._ranges)) if fits(p)), now)
            if chosen != now:
                ctx.set_optimization_profile(chosen)
        for n, s in shapes.items():
            ctx.set_input_shape(n, list(s))
        slot.shapes = shapes

    def _shape(self, slot: _Slot, name: str) -> tuple:
        """An I/O tensor's shape for this run (the engine's, or the context's when dynamic)."""
        if self._dynamic:
            return tuple(slot.context.get_tensor_shape(name))
        arg = self._input_args.get(name) or self._output_args[name]
        return tuple(arg.shape)

    def _feed_error(self, feed: Mapping[str, Any]) -> None:
        for n in feed:
            if n not in self._input_args:
                raise _kiln.NotFoundError(
                    f"the model has no input '{n}' (its inputs are "
                    f"{', '.join(repr(a.name) for a in self._inputs)})")
        missing = [a.name for a in self._inputs if a.name not in feed]
        raise _kiln.InvalidArgumentError(f"missing input(s): {', '.join(missing)}")

    def _run_cpu(self, slot: _Slot, names, feed, output_type) -> List[Any]:
        ctx = slot.context
        bind = ctx._bind
        host_only = True
        keep = []
        for name, value in feed.items():
            if type(value) is np.ndarray:
                if not value.flags.c_contiguous:
                    value = np.ascontiguousarray(value)
                # NumPy exports no DLPack for ml_dtypes' bfloat16: bind it by address.
                if _BF16 is not None and value.dtype == _BF16:
                    self._check_host(name, value, self._shape(slot, name))
                    ctx._bind_address(name, value.ctypes.data)
                    keep.append(value)
                    continue
            else:
                host_only = False
                if not hasattr(value, "__dlpack__") and not hasattr(value, "__array_interface__"):
                    value = self._foreign(name, value)
            bind(name, value)
            keep.append(value)
        numpy_out = host_only if output_type is None else output_type == "numpy"
        results = []
        engine = self._engine
        specs = self._output_specs
        for name in names:
            if numpy_out:
                shape, dtype = specs[name]
                if self._dynamic:
                    shape = self._shape(slot, name)
                if dtype is not None:
                    out = np.empty(shape, dtype)
                    bind(name, out)
                else:  # bf16: ml_dtypes' bfloat16 (or its raw bits, as uint16, without it)
                    out = np.empty(shape, self._output_args[name].dtype or np.uint16)
                    ctx._bind_address(name, out.ctypes.data)
            else:
                out = engine._empty_tensor(name, self._shape(slot, name) if self._dynamic else None)
                ctx._bind_address(name, out.data_ptr)
            results.append(out)
        if len(names) != len(self._output_names):
            for name in self._output_names:
                if name not in names:
                    ctx._bind_address(name, slot.buffer(engine, name, self._shape(slot, name)))
        ctx.execute_async(0)
        return results

    def _foreign(self, name: str, value: Any) -> Any:
        """What _bind takes for an object that is neither NumPy nor DLPack."""
        if hasattr(value, "__cuda_array_interface__"):
            return value
        try:
            return np.ascontiguousarray(value)
        except Exception:
            raise _kiln.InvalidArgumentError(
                f"input '{name}': a {type(value).__name__} is not an array (give a NumPy array "
                "or an object with __dlpack__ or __cuda_array_interface__)") from None

    def _check_host(self, name: str, value: np.ndarray, expected: tuple) -> None:
        """What the C++ binding checks for DLPack arrays, for host arrays kiln copies or binds by
        address (a CUDA session's NumPy inputs; bf16)."""
        arg = self._input_args[name]
        if arg.dtype is None or value.dtype != arg.dtype:
            got = _kiln.data_type_name(_interop._FROM_NUMPY[value.dtype]) \
                if value.dtype in _interop._FROM_NUMPY else str(value.dtype)
            raise _kiln.InvalidArgumentError(
                f"tensor '{name}' is {got} but the engine expects "
                f"{_kiln.data_type_name(arg.kiln_dtype)}")
        if tuple(value.shape) != expected:
            raise _kiln.InvalidArgumentError(
                f"tensor '{name}' has shape {tuple(value.shape)} but the engine expects "
                f"{expected}")

    def _bind_cai(self, ctx, name: str, value: Any, expected: tuple) -> None:
        view = CudaArrayView(value)
        arg = self._input_args[name]
        if view.dtype != arg.kiln_dtype:
            raise _kiln.InvalidArgumentError(
                f"tensor '{name}' is {_kiln.data_type_name(view.dtype)} but the engine expects "
                f"{_kiln.data_type_name(arg.kiln_dtype)}")
        if tuple(view.shape) != expected:
            raise _kiln.InvalidArgumentError(
                f"tensor '{name}' has shape {tuple(view.shape)} but the engine expects "
                f"{expected}")
        ctx._bind_address(name, view.ptr)

    def _run_cuda(self, slot: _Slot, names, feed, stream, output_type) -> List[Any]:
        ctx = slot.context
        engine = self._engine
        device = engine.device
        host_only = all(type(v) is np.ndarray for v in feed.values())
        numpy_out = output_type == "numpy" or (output_type is None and host_only)
        user = stream is not None and not numpy_out
        handle = stream_handle(stream) if user else slot.stream_handle
        keep = []
        for name, value in feed.items():
            on_host = type(value) is np.ndarray
            if not on_host and hasattr(value, "__dlpack_device__"):
                dev = value.__dlpack_device__()
                if int(dev[0]) in (1, 3):  # kDLCPU, kDLCUDAHost
                    value, on_host = np.from_dlpack(value), True
            elif not on_host and not hasattr(value, "__cuda_array_interface__"):
                value, on_host = self._foreign(name, value), True
            if name in self._host_inputs:
                # Kiln reads these on the host: bind the host array itself, never a device copy.
                if not on_host:
                    raise _kiln.InvalidArgumentError(
                        f"input '{name}' is a shape-value input, which kiln reads on the host: "
                        "give it as a NumPy array")
                value = np.ascontiguousarray(value)
                self._check_host(name, value, self._shape(slot, name))
                ctx._bind_address(name, value.ctypes.data)
            elif on_host:
                value = np.ascontiguousarray(value)
                shape = self._shape(slot, name)
                self._check_host(name, value, shape)
                ptr = slot.buffer(engine, name, shape)
                device.copy_from_host(ptr, value)
                ctx._bind_address(name, ptr)
            elif hasattr(value, "__dlpack__"):
                # The producer orders its pending work before ours on `handle`.
                ctx._bind(name, value.__dlpack__(stream=handle or 1))
            else:
                self._bind_cai(ctx, name, value, self._shape(slot, name))
            keep.append(value)
        results = []
        for name in names:
            if numpy_out:
                ctx._bind_address(name, slot.buffer(engine, name, self._shape(slot, name)))
            else:
                out = engine._empty_tensor(name, self._shape(slot, name) if self._dynamic else None)
                ctx._bind_address(name, out.data_ptr)
                if user:
                    _kiln._set_tensor_stream(out, handle)
                results.append(out)
        for name in self._output_names:
            if name not in names:
                ctx._bind_address(name, slot.buffer(engine, name, self._shape(slot, name)))
        ctx.execute_async(handle)
        if not user:
            slot.stream.synchronize()
        if numpy_out:
            results = [slot.scratch[name].numpy() for name in names]
        return results

    def __repr__(self) -> str:
        return (f"kiln.InferenceSession(device='{self.device}', inputs={self._inputs}, "
                f"outputs={self._outputs})")
