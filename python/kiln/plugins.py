"""Plugins from Python: loading libraries, the registry's listing, the lifecycle trace and the
plugin conformance harness (include/kiln/registry.h, include/kiln/plugin_check.h)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _kiln
from ._kiln import DataType

_HERE = os.path.dirname(os.path.abspath(__file__))
BUILTIN_PLUGINS = os.path.join(_HERE, "libkiln_plugins.so")
"""kiln's own plugin library (CropAndResize), installed with the package."""


def load_plugin_library(path: Union[str, "os.PathLike[str]"]) -> None:
    """dlopen()s a plugin library, checks its ABI version and registers its creators.
    Loading the same library again is harmless; a missing or bad file raises kiln.Error."""
    _kiln.load_plugin_library(os.fspath(path))


def init_plugins() -> str:
    """Loads kiln's own plugin library (TensorRT's init_libnvinfer_plugins) and returns its path."""
    load_plugin_library(BUILTIN_PLUGINS)
    return BUILTIN_PLUGINS


def registered_plugins() -> List[Dict[str, Any]]:
    """Every registered creator: {name, version, namespace, library, library_hash, fields}."""
    return list(_kiln.registered_plugins())


class Trace:
    """The lifecycle trace written inside a `with kiln.trace(path)` block: .path, and after the
    block .events (one dict per creator or plugin call, DESIGN.md §2)."""

    def __init__(self, path: str):
        self.path = path
        self.events: List[Dict[str, Any]] = []

    def read(self) -> List[Dict[str, Any]]:
        with open(self.path) as f:
            self.events = [json.loads(line) for line in f if line.strip()]
        return self.events

    def calls(self, call: Optional[str] = None) -> List[Dict[str, Any]]:
        return [e for e in self.events if call is None or e.get("call") == call]


@contextlib.contextmanager
def trace(path: Optional[Union[str, "os.PathLike[str]"]] = None) -> Iterator[Trace]:
    """Traces every plugin and creator call kiln makes inside the block to `path` (a temporary
    file when None), one JSON line each; the Trace's .events hold them afterwards. KILN_TRACE=path
    in the environment traces a whole process instead. `kiln trace FILE` renders and checks one."""
    tmp = None
    if path is None:
        fd, tmp = tempfile.mkstemp(prefix="kiln-trace-", suffix=".jsonl")
        os.close(fd)
        path = tmp
    t = Trace(os.fspath(path))
    _kiln.set_trace_path(t.path)
    try:
        yield t
    finally:
        _kiln.flush_trace()
        _kiln.set_trace_path("")
        t.read()
        if tmp:
            os.unlink(tmp)


@dataclass
class PluginCheckReport:
    """What kiln.check_plugin() found: one row per check (check, device, combination, outcome
    'pass'/'FAIL'/'skip', detail), the counts, the seed and the printed table."""

    rows: List[Dict[str, str]]
    passed: int
    failed: int
    skipped: int
    all_passed: bool
    seed: int
    table: str = field(repr=False)

    def __str__(self) -> str:
        return self.table

    def find(self, check: str, device: Optional[str] = None) -> List[Dict[str, str]]:
        return [r for r in self.rows if r["check"] == check and (device is None or r["device"] == device)]


InputSpec = Union[Sequence[int], Tuple[Sequence[int], Any], Tuple[Sequence[int], Any, float, float],
                  np.ndarray]


def _input(spec: Any) -> tuple:
    if isinstance(spec, np.ndarray):
        from ._interop import from_numpy_dtype
        return (list(spec.shape), from_numpy_dtype(spec.dtype), -1.0, 1.0,
                spec.astype(np.float64).ravel().tolist())
    spec = tuple(spec)
    if spec and all(isinstance(d, (int, np.integer)) for d in spec):
        return (list(spec), DataType.FLOAT, -1.0, 1.0, None)
    shape = list(spec[0])
    dtype = spec[1] if len(spec) > 1 else DataType.FLOAT
    if not isinstance(dtype, DataType):
        from ._interop import from_numpy_dtype
        dtype = from_numpy_dtype(dtype)
    low = float(spec[2]) if len(spec) > 2 else -1.0
    high = float(spec[3]) if len(spec) > 3 else 1.0
    return (shape, dtype, low, high, None)


def check_plugin(
    name: str,
    fields: Optional[Mapping[str, Any]] = None,
    inputs: Sequence[InputSpec] = (),
    *,
    version: str = "1",
    namespace: str = "",
    devices: Sequence[str] = ("cpu", "cuda:0"),
    contexts: int = 3,
    iterations: int = 4,
    max_combinations: int = 32,
    check_empty_tensors: bool = True,
    seed: int = 0,
    plugins: Sequence[Any] = (),
) -> PluginCheckReport:
    """Drives one registered plugin through everything kiln does with it (build, save/load, the
    serialize round trip, contexts on threads and streams, CUDA graphs, empty tensors, every
    format combination it accepts) and checks the lifecycle guarantees; returns the table as
    data. The same harness as `kiln check-plugin` (include/kiln/plugin_check.h).

    fields: {name: value}, typed as the creator lists them. inputs: per plugin input, a shape,
    (shape, dtype), (shape, dtype, low, high) for random data in [low, high), or a NumPy array of
    fixed values. Example::

        kiln.init_plugins()
        r = kiln.check_plugin("CropAndResize", {"crop_height": 7, "crop_width": 7},
                              [(2, 16, 20, 24), ((10, 4), "float32", 0, 1), ((10,), "int32", 0, 2)])
        assert r.all_passed, r
    """
    for p in plugins:
        load_plugin_library(p)
    d = _kiln._plugin_check(name, dict(fields or {}), [_input(i) for i in inputs], version,
                            namespace, list(devices), contexts, iterations, max_combinations,
                            check_empty_tensors, seed)
    return PluginCheckReport(rows=list(d["rows"]), passed=d["passed"], failed=d["failed"],
                             skipped=d["skipped"], all_passed=d["all_passed"], seed=d["seed"],
                             table=d["table"])
