#!/usr/bin/env python3
"""One plan for a range of batches against plans built for one batch (issue 10's GPU aim).

ResNet-50 (torchvision, random weights, eval) is exported once with a dynamic batch axis. kiln
builds it twice in FP16 on the GPU: for batch 64 alone, and with an optimization profile
1..64 (opt 64). Both are timed by `kiln bench` at batch 64 (CUDA graph and plain enqueue), the
profile plan also at batches 8 and 1, and its outputs at batch 8 are compared with PyTorch FP32;
each plan's context device memory at batch 64 is printed beside its times.
usage: dynamic_cnn_h200.py KILN OUT_DIR   (prints one line per figure; writes OUT_DIR/dynamic.json)
"""
import inspect
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision


def run(cmd, log):
    t = time.time()
    with open(log, "w") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    return rc, time.time() - t


def bench(kiln, plan, out, tag, shape, graph):
    js = os.path.join(out, tag + ".json")
    cmd = [kiln, "bench", plan, "--no-progress", "--duration", "2", "--json", js,
           "--shapes", "x:" + "x".join(map(str, shape))] + (
               ["--cuda-graph"] if graph else ["--layer-by-layer"])
    rc, _ = run(cmd, js.replace(".json", ".log"))
    if rc != 0:
        return None, None
    with open(js) as f:
        j = json.load(f)
    return j["latency_ms"]["median"], round(j["memory"]["context_bytes"] / 2**20, 1)


def main():
    kiln, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = torchvision.models.resnet50().eval()
    onnx = os.path.join(out, "resnet50_dynamic.onnx")
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, (torch.randn(2, 3, 224, 224),), onnx, opset_version=17,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, **kwargs)
    r = {}
    plans = {"static64": ["--shapes", "x:64x3x224x224"],
             "profile1to64": ["--shapes", "x:1x3x224x224,64x3x224x224,64x3x224x224"]}
    for tag, shapes in plans.items():
        plan = os.path.join(out, tag + ".plan")
        rc, secs = run([kiln, "build", "--onnx", onnx, "--device", "cuda", "--fp16", "--save", plan]
                       + shapes, os.path.join(out, tag + ".build.log"))
        r[tag + "_build_s"] = round(secs, 1)
        if rc != 0:
            print(f"{tag}: build failed (see {tag}.build.log)")
            continue
        for graph in (True, False):
            key = f"{tag}_b64{'_graph' if graph else ''}_ms"
            r[key], r[f"{tag}_context_mib"] = bench(kiln, plan, out, key, (64, 3, 224, 224), graph)
    profile = os.path.join(out, "profile1to64.plan")
    for b in (8, 1):
        r[f"profile1to64_b{b}_graph_ms"], _ = bench(kiln, profile, out, f"p_b{b}",
                                                    (b, 3, 224, 224), True)
    x = torch.randn(8, 3, 224, 224)
    with torch.no_grad():
        ref = model(x).numpy().astype(np.float64)
    np.save(os.path.join(out, "x8.npy"), x.numpy())
    rc, _ = run([kiln, "run", profile, "--input", "x=" + os.path.join(out, "x8.npy"),
                 "--output-dir", os.path.join(out, "b8")], os.path.join(out, "b8.log"))
    if rc == 0:
        got = np.load(os.path.join(out, "b8", "y.npy")).astype(np.float64)
        r["profile_b8_rel_l2_vs_torch_fp32"] = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    s, p = r.get("static64_b64_graph_ms"), r.get("profile1to64_b64_graph_ms")
    if s and p:
        r["profile_over_static_b64_graph"] = round(p / s, 3)
    for k, v in r.items():
        print(f"{k}: {v}")
    with open(os.path.join(out, "dynamic.json"), "w") as f:
        json.dump(r, f, indent=1)


if __name__ == "__main__":
    main()
