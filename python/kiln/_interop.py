"""Data types, streams and foreign arrays: the glue between kiln's C++ types and Python's array
libraries (NumPy, DLPack producers such as PyTorch, CuPy and JAX, __cuda_array_interface__)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _kiln
from ._kiln import DataType

try:  # NumPy has no bfloat16; ml_dtypes (a dependency of onnx and JAX) gives it one.
    import ml_dtypes as _ml_dtypes

    _BFLOAT16: Optional[np.dtype] = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _BFLOAT16 = None

_TO_NUMPY = {
    DataType.FLOAT: np.dtype(np.float32),
    DataType.HALF: np.dtype(np.float16),
    DataType.INT8: np.dtype(np.int8),
    DataType.INT32: np.dtype(np.int32),
    DataType.INT64: np.dtype(np.int64),
    DataType.BOOL: np.dtype(np.bool_),
}
if _BFLOAT16 is not None:
    _TO_NUMPY[DataType.BF16] = _BFLOAT16
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}

# onnxruntime's type strings, for NodeArg.type.
_ORT_NAMES = {
    DataType.FLOAT: "tensor(float)",
    DataType.HALF: "tensor(float16)",
    DataType.BF16: "tensor(bfloat16)",
    DataType.INT8: "tensor(int8)",
    DataType.INT32: "tensor(int32)",
    DataType.INT64: "tensor(int64)",
    DataType.BOOL: "tensor(bool)",
}

# __cuda_array_interface__ typestr (byte order stripped) -> kiln type.
_TYPESTR = {
    "f4": DataType.FLOAT,
    "f2": DataType.HALF,
    "i1": DataType.INT8,
    "i4": DataType.INT32,
    "i8": DataType.INT64,
    "b1": DataType.BOOL,
}


def nptype(dtype: DataType) -> np.dtype:
    """The NumPy dtype of a kiln DataType (TensorRT's trt.nptype). BF16 needs ml_dtypes."""
    try:
        return _TO_NUMPY[dtype]
    except KeyError:
        raise _kiln.UnsupportedError(
            f"{_kiln.data_type_name(dtype)} has no NumPy dtype here (install ml_dtypes for bf16)"
        ) from None


def from_numpy_dtype(dtype: Any) -> DataType:
    """The kiln DataType of a NumPy dtype (or anything np.dtype() takes)."""
    d = np.dtype(dtype)
    try:
        return _FROM_NUMPY[d]
    except KeyError:
        raise _kiln.InvalidArgumentError(f"kiln has no data type for NumPy's {d}") from None


def ort_type_name(dtype: DataType) -> str:
    return _ORT_NAMES[dtype]


def stream_handle(stream: Any) -> int:
    """A cudaStream_t as an int, from an int, None (0) or an object with .cuda_stream (PyTorch)
    or .ptr (CuPy)."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attr, None)
        if value is not None:
            return int(value)
    raise _kiln.InvalidArgumentError(
        f"a stream is an int (cudaStream_t) or has .cuda_stream or .ptr; got {type(stream).__name__}"
    )


def same_stream(a: int, b: Optional[int]) -> bool:
    """Whether two DLPack/CUDA stream numbers name the same stream (0 and 1 are both the legacy
    default stream; None and -1 ask for no synchronisation)."""
    if b is None or b == -1:
        return True
    legacy = (0, 1)
    return a == b or (a in legacy and b in legacy)


class CudaArrayView:
    """A DLPack view of an object that only has __cuda_array_interface__ (v2/v3), so kiln can
    take it like any DLPack tensor. The owner is kept alive by the view."""

    def __init__(self, obj: Any):
        cai = obj.__cuda_array_interface__
        self.owner = obj
        self.ptr, readonly = cai["data"]
        self.shape = tuple(int(s) for s in cai["shape"])
        typestr = cai["typestr"]
        key = typestr[1:] if typestr[0] in "<>|=" else typestr
        if typestr[0] == ">":
            raise _kiln.InvalidArgumentError("__cuda_array_interface__: big-endian data")
        if key not in _TYPESTR:
            raise _kiln.InvalidArgumentError(
                f"__cuda_array_interface__: kiln has no data type for '{typestr}'")
        self.dtype = _TYPESTR[key]
        self.strides = cai.get("strides")
        self.stream = cai.get("stream")
        if self.strides is not None:
            item = _kiln.data_type_size(self.dtype)
            expect, ok = item, True
            for dim, stride in zip(reversed(self.shape), reversed(self.strides)):
                if dim != 1 and stride != expect:
                    ok = False
                expect *= dim
            if not ok:
                raise _kiln.InvalidArgumentError(
                    "__cuda_array_interface__: the array is not contiguous (kiln needs row-major "
                    "memory)")


def is_numpy(x: Any) -> bool:
    return type(x) is np.ndarray
