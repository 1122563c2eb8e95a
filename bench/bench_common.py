"""What the GPU speed benchmarks (transformers_h200.py, cnn_h200.py) share: one exported ONNX
model taken through `kiln build`, `kiln run` (its output compared with PyTorch's FP32 reference)
and `kiln bench` (with and without a CUDA graph), and the CUDA-event timer of the PyTorch peers.
Both scripts must measure kiln and its peers the same way for their figures to be compared, so the
steps live here once.
"""

import json
import os
import subprocess
import time

import numpy as np
import torch


def time_cuda(fn, iters=100, warmup=20):
    """Median milliseconds of fn() over iters runs after warmup, CUDA events around each."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def run(cmd, log):
    """Runs cmd with its output in log; returns its status and wall seconds."""
    start = time.time()
    with open(log, "w") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    return rc, time.time() - start


def rel_l2(a, b):
    a = a.astype(np.float64).ravel()
    b = b.astype(np.float64).ravel()
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def measure_kiln(kiln, out, tag, onnx_path, input_name, input_path, ref, r, device="cuda",
                 fp16=True, classifier=False, profile=False):
    """Builds onnx_path into OUT/TAG.plan, runs it on input_path and benches it, filling r:
    kiln_build_s, kiln_build_ok, rel_l2_vs_fp32 (and top1_agree for a classifier, whose output
    "y" ends in the class axis), kiln_ms, kiln_enqueue_ms and kiln_context_mib (layer by layer),
    and on CUDA kiln_graph_ms and kiln_graph_enqueue_ms (the engine's own CUDA graphs, what a
    plugin-free CUDA plan's contexts do by default). Every step's log lands in OUT; profile adds a
    per-layer profile log."""
    plan = os.path.join(out, tag + ".plan")
    rc, secs = run([kiln, "build", "--onnx", onnx_path, "--device", device] +
                   (["--fp16"] if fp16 else []) + ["--save", plan, "--verbose"],
                   os.path.join(out, tag + ".build.log"))
    r["kiln_build_s"] = round(secs, 1)
    r["kiln_build_ok"] = rc == 0
    if rc != 0:
        return
    outdir = os.path.join(out, tag + "_out")
    rc, _ = run([kiln, "run", plan, "--input", f"{input_name}={input_path}",
                 "--output-dir", outdir], os.path.join(out, tag + ".run.log"))
    if rc == 0:
        got = np.load(os.path.join(outdir, "y.npy"))
        r["rel_l2_vs_fp32"] = rel_l2(got, ref)
        if classifier:
            r["top1_agree"] = float(np.mean(got.argmax(-1) == ref.argmax(-1)))
    # CUDA graphs exist only on CUDA; `kiln bench --engine-graphs` refuses a CPU plan.
    for graph in (False, True) if device.startswith("cuda") else (False,):
        js = os.path.join(out, f"{tag}.bench{'_graph' if graph else ''}.json")
        cmd = [kiln, "bench", plan, "--no-progress", "--duration", "2", "--json", js]
        if device.startswith("cuda"):
            cmd.append("--engine-graphs" if graph else "--layer-by-layer")
        rc, _ = run(cmd, js.replace(".json", ".log"))
        if rc == 0:
            with open(js) as f:
                j = json.load(f)
            key = "kiln_graph_ms" if graph else "kiln_ms"
            r[key] = j["latency_ms"]["median"]
            r["kiln_graph_enqueue_ms" if graph else "kiln_enqueue_ms"] = j["enqueue_ms"]["median"]
            if not graph:
                r["kiln_context_mib"] = j["memory"]["context_bytes"] / 2**20
    if profile:
        run([kiln, "bench", plan, "--no-progress", "--duration", "1", "--profile"],
            os.path.join(out, tag + ".profile.log"))
