#!/usr/bin/env python3
"""Build time with a timing cache (issue 9 item 7): ResNet-50 b64 built three times in a row.

torchvision ResNet-50 (random weights) is exported at batch 64, then `kiln build --device cuda
--fp16 --timing-cache F` runs three times against the same F: cold (F absent), warm (F from the
first build) and warm again. The aim is a warm build under 3 s; a second build slower than the
third means the first left something untimed that a rebuild reaches (RESULTS.md, 2026-12-07).
Each build's verbose log is kept with every line stamped by the seconds since the build started,
and the largest gaps of the last build are printed: where a warm build's time goes.
usage: timing_cache_build.py KILN OUT_DIR [--device cuda|cpu] [--batch N]
"""
import argparse
import inspect
import os
import subprocess
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("out")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    onnx = os.path.join(args.out, f"resnet50_b{args.batch}.onnx")
    model = torchvision.models.resnet50().eval()
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, (torch.randn(args.batch, 3, 224, 224),), onnx, opset_version=17,
                      input_names=["x"], output_names=["y"], **kwargs)
    cache = os.path.join(args.out, "timing.cache")
    if os.path.exists(cache):
        os.remove(cache)
    half = ["--fp16"] if args.device.startswith("cuda") else []
    for build in ("cold", "warm", "warm again"):
        plan = os.path.join(args.out, build.replace(" ", "_") + ".plan")
        log = os.path.join(args.out, build.replace(" ", "_") + ".build.log")
        start = time.time()
        stamped = []
        with open(log, "w") as f:
            p = subprocess.Popen([args.kiln, "build", "--onnx", onnx, "--device", args.device]
                                 + half + ["--timing-cache", cache, "--save", plan, "--verbose"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for line in p.stdout:
                stamped.append((time.time() - start, line.rstrip()))
                f.write(f"{stamped[-1][0]:8.3f} {line}")
            rc = p.wait()
        print(f"resnet50 b{args.batch} {args.device} build, timing cache {build}: "
              f"{time.time() - start:.1f} s" + ("" if rc == 0 else f" (failed: {log})"))
    # The last build's slowest stretches: the seconds before each of its log lines.
    gaps = [(t - (stamped[i - 1][0] if i else 0.0), line) for i, (t, line) in enumerate(stamped)]
    for gap, line in sorted(gaps, reverse=True)[:8]:
        print(f"  {gap:6.3f} s before: {line[:160]}")


if __name__ == "__main__":
    main()
