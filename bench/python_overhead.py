#!/usr/bin/env python3
"""What a Python call costs on top of the engine: kiln's InferenceSession.run over kiln's C++
enqueue, and onnxruntime's InferenceSession.run over its C++ model run, on the same tiny ONNX
model, in the same run of this script, on the CPU.

usage: python bench/python_overhead.py [--runs N] [--out FILE]
  (a venv with kiln installed by `pip install .`, numpy, onnx and onnxruntime:
   python/requirements-ci.txt)

The model: x [1, 16] float32 -> Relu -> y, one op, so the engines' own work is almost nothing
and what is left is the cost of going through each API.

How each figure is measured (median of 7 repetitions of N calls each, per call):
  kiln C++ enqueue        `kiln run PLAN --runs K` (the command line installed with the package,
                          the same libraries): its loop is IExecutionContext::enqueue alone on
                          pre-bound buffers. (time with K=M+1 - time with K=1) / M, M = 100 N,
                          cancels the process start, plan load and setup.
  kiln execute_async      the TensorRT-shaped binding: context.execute_async(0) on pre-bound
                          NumPy buffers: one call from Python into the engine, nothing else.
  kiln run                InferenceSession.run(None, {"x": x}): check names, shape and dtype,
                          bind the input, allocate and bind a NumPy output, enqueue.
  ort run_with_iobinding  onnxruntime with its input and output bound ahead (IOBinding): one
                          call from Python into the engine, nothing else.
  ort run                 onnxruntime.InferenceSession.run(None, {"x": x}).
The Python overhead of run() is what run() costs over the same engine's pre-bound call: kiln
run - kiln execute_async, and ort run - ort run_with_iobinding. (onnxruntime's profiler was tried
for its C++ time and rejected: profiling makes each run slower than an unprofiled run() from
Python.) kiln's figure over its bare C++ enqueue (kiln run - kiln C++ enqueue) is given too.
"""

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import kiln


def tiny_model(path):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def per_call(fn, n, reps=7):
    for _ in range(min(n, 1000)):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t) / n)
    return statistics.median(times) * 1e6


def cli_enqueue_us(cli, plan, n, reps=7):
    def wall(k):
        t = time.perf_counter()
        subprocess.run([cli, "run", plan, "--runs", str(k), "--seed", "1"], check=True,
                       stdout=subprocess.DEVNULL)
        return time.perf_counter() - t
    diffs = []
    for _ in range(reps):
        diffs.append((wall(n + 1) - wall(1)) / n)
    return statistics.median(diffs) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    n = args.runs

    work = tempfile.mkdtemp(prefix="kiln-overhead-")
    model = os.path.join(work, "tiny.onnx")
    tiny_model(model)
    x = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)

    ksess = kiln.InferenceSession(model)
    plan = os.path.join(work, "tiny.plan")
    ksess.save(plan)
    ctx = ksess.engine.create_execution_context()
    y = np.empty((1, 16), np.float32)
    ctx.set_tensor_address("x", x)
    ctx.set_tensor_address("y", y)
    cli = os.path.join(os.path.dirname(kiln.__file__), "bin", "kiln")

    osess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    binding = osess.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("y")

    np.testing.assert_array_equal(ksess.run(None, {"x": x})[0], osess.run(None, {"x": x})[0])

    rows = {
        "kiln C++ enqueue": cli_enqueue_us(cli, plan, 100 * n),
        "kiln execute_async": per_call(lambda: ctx.execute_async(0), n),
        "kiln run": per_call(lambda: ksess.run(None, {"x": x}), n),
        "ort run_with_iobinding": per_call(lambda: osess.run_with_iobinding(binding), n),
        "ort run": per_call(lambda: osess.run(None, {"x": x}), n),
    }
    kiln_over = rows["kiln run"] - rows["kiln execute_async"]
    ort_over = rows["ort run"] - rows["ort run_with_iobinding"]
    lines = [
        f"python_overhead: Relu on [1,16] fp32, CPU, {n} calls x 7 (median per call); "
        f"Python {platform.python_version()}, numpy {np.__version__}, onnxruntime "
        f"{ort.__version__}, kiln {kiln.__version__}, {os.cpu_count()} cores",
    ]
    for name, us in rows.items():
        lines.append(f"  {name:<24} {us:8.2f} us")
    lines.append(f"  run() over the pre-bound call: kiln {kiln_over:.2f} us, onnxruntime "
                 f"{ort_over:.2f} us (ratio kiln/ort {kiln_over / ort_over:.2f})")
    lines.append(f"  kiln run() over its bare C++ enqueue: "
                 f"{rows['kiln run'] - rows['kiln C++ enqueue']:.2f} us")
    lines.append(f"  whole call: kiln run {rows['kiln run']:.2f} us vs ort run {rows['ort run']:.2f} us"
                 f" (ratio {rows['kiln run'] / rows['ort run']:.2f})")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
