#!/usr/bin/env python3
"""CNN speed on the GPU machine: kiln against PyTorch eager (channels_last) and torch.compile, in
FP16 and FP32, measured in one run (issue 9, item 8 and its aims). An inference engine exists to
be faster than the framework the model came from; the peers run on the same machine in the same
run, so that the ratios hold whatever the machine's clocks and software that day.

Models: torchvision's resnet50 (batch 1 and 64) and mobilenet_v2 (batch 64), 224x224 images,
random weights (nothing can be downloaded), their BatchNorm statistics gathered on one batch of
random images so that the activations keep a trained network's range (make_model says why).
Outside that default table, `--only efficientnet_b0` (batch 64) times the SiLU epilogue fusion.

For each model and batch: PyTorch FP32 (eval mode, TF32 off) gives the reference output on one
random normal input (never zeros: they would hide every difference); the model is exported to ONNX
once (opset 17, the TorchScript exporter, FP32 weights, static shapes). For each precision
`kiln build` builds it (--fp16 for FP16; the build time is recorded), `kiln run` on the same input
is compared with the FP32 reference (relative L2 error, top-1 agreement over the batch), and
`kiln bench` times it with and without a CUDA graph (GPU compute time with CUDA events, median;
host enqueue time; context device memory). The peers run in the same precision, TF32 off: eager
with the model and input in channels_last, and torch.compile (default mode at batch 64,
"reduce-overhead", i.e. CUDA graphs, at batch 1, as the issue's figures were measured), each timed
with CUDA events around every iteration, median of 100 after warm-up; and eager's activation peak,
torch.cuda.max_memory_allocated over one forward under inference_mode less the weights' bytes
(so the input, every activation and the output), which the issue's memory aim compares kiln's
context memory with.
best/kiln in the table is the faster peer's time over kiln's CUDA graph time: kiln's throughput
as a multiple of the better peer's, the figure of the issue's aims.

--device cpu is a smoke test of the flow on a machine without a GPU: kiln builds for the CPU and
is benched with its steady clock, the only peer is eager PyTorch on the CPU, and --image shrinks
the input so that it is quick, e.g.
  cnn_h200.py build/release/kiln /tmp/cnn --device cpu --only mobilenet_v2 --batches 1 \
    --precisions fp32 --image 64

usage: cnn_h200.py KILN OUT_DIR [--only resnet50|mobilenet_v2|efficientnet_b0] [--batches 1,64]
                   [--precisions fp16,fp32] [--image 224] [--device cuda|cpu] [--cudnn-benchmark]
Writes OUT_DIR/results.json and prints a table; every step's log lands in OUT_DIR.
"""

import argparse
import copy
import inspect
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision

from bench_common import measure_kiln, rel_l2, time_cuda

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

MODELS = {"resnet50": [1, 64], "mobilenet_v2": [64]}  # each model's batches: the table
# Outside the default table, with --only: EfficientNet-B0 times the SiLU epilogue fusion.
EXTRA_MODELS = {"efficientnet_b0": [64]}
# Networks whose BatchNorm statistics are gathered on random images (make_model says why).
BATCH_STATS_MODELS = ("mobilenet_v2", "efficientnet_b0")


def make_model(name, image, gen):
    """torchvision's name with random weights; MobileNetV2's (and EfficientNet's) BatchNorm
    statistics gathered on random images.

    With BatchNorm's initial statistics (mean 0, variance 1) MobileNetV2's logits come out near
    1e-9, below FP16's smallest normal number, so its FP16 figures would compare rounding noise;
    statistics of one batch normalise every layer as a trained network's do. ResNet-50 keeps its
    initial statistics: its activations reach the hundreds, well inside FP16's range, and with
    statistics of one random batch PyTorch's own FP16 result is 3e-2 (relative L2) from its FP32
    one (measured on the H200, 2026-12-02), too ill-conditioned a network to judge a kernel's
    rounding by (with the initial statistics that error is below 1e-3, the issue's figures).
    """
    model = getattr(torchvision.models, name)(weights=None)
    if name not in BATCH_STATS_MODELS:
        return model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # the plain average of the batches seen: here the one batch's
    model.train()
    with torch.no_grad():
        model(torch.randn(16, 3, image, image, generator=gen))
    return model.eval()


def time_host(fn, iters=20, warmup=5):
    """Median milliseconds of fn() on the CPU (steady clock); fewer runs than on the GPU, as the
    CPU mode checks the flow rather than measuring."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def export(model, x, path):
    # The TorchScript exporter writes the static graph kiln builds; torch 2.5 and later take
    # dynamo= (2.9 makes the dynamo exporter the default), older ones have no such argument.
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with torch.no_grad():
        torch.onnx.export(model, (x,), path, opset_version=17, input_names=["x"],
                          output_names=["y"], **kwargs)


def measure_peers(model, x, precision, device, batch, ref, r):
    """Eager channels_last (and on CUDA its activation peak and torch.compile) in precision,
    filling r; works on a copy, so that model stays FP32 and contiguous for the next export."""
    dtype = torch.float16 if precision == "fp16" else torch.float32
    peer = copy.deepcopy(model).to(device, dtype).to(memory_format=torch.channels_last)
    xp = x.to(device, dtype).to(memory_format=torch.channels_last)
    with torch.no_grad():
        r["torch_rel_l2_vs_fp32"] = rel_l2(peer(xp).float().cpu().numpy(), ref)
        if device == "cpu":
            r["eager_ms"] = time_host(lambda: peer(xp))
            return
        r["eager_ms"] = time_cuda(lambda: peer(xp))
        # The peak less what was resident before but the input, i.e. less the weights when only
        # they and the input are resident, and blind to anything an earlier case left allocated.
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        resident = torch.cuda.memory_allocated() - xp.numel() * xp.element_size()
        with torch.inference_mode():
            peer(xp)
        torch.cuda.synchronize()
        r["eager_activation_peak_mib"] = (torch.cuda.max_memory_allocated() - resident) / 2**20
        t0 = time.time()
        mode = "reduce-overhead" if batch == 1 else "default"
        compiled = torch.compile(peer, mode=mode)
        compiled(xp)
        compiled(xp)
        r["compile_s"] = round(time.time() - t0, 1)
        r["compile_mode"] = mode
        r["compile_ms"] = time_cuda(lambda: compiled(xp))
    # Every case compiles a copy of the same forward code: without a reset Dynamo would keep
    # each case's variant, and stop compiling at its cache size limit.
    torch._dynamo.reset()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kiln")
    ap.add_argument("out")
    ap.add_argument("--only", choices=list(MODELS) + list(EXTRA_MODELS))
    ap.add_argument("--batches")
    ap.add_argument("--precisions", help="fp16,fp32 by default; fp32 with --device cpu")
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    # PyTorch's default picks each cuDNN algorithm by heuristic; with this it times them, as kiln's
    # builder does.
    ap.add_argument("--cudnn-benchmark", action="store_true")
    args = ap.parse_args()
    precisions = (args.precisions or ("fp32" if args.device == "cpu" else "fp16,fp32")).split(",")
    if not set(precisions) <= {"fp16", "fp32"}:
        ap.error("--precisions takes fp16 and fp32")
    if args.device == "cpu" and "fp16" in precisions:
        ap.error("kiln builds FP16 plans for CUDA only: --device cpu takes --precisions fp32")
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    os.makedirs(args.out, exist_ok=True)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"{torch.cuda.get_device_name() if args.device == 'cuda' else 'cpu'}", flush=True)
    results_path = os.path.join(args.out, "results.json")
    results = []
    gen = torch.Generator().manual_seed(0)
    for name, model_batches in {**MODELS, **EXTRA_MODELS}.items():
        if name not in MODELS and args.only != name:
            continue
        if args.only and name != args.only:
            continue
        batches = [int(b) for b in args.batches.split(",")] if args.batches else model_batches
        torch.manual_seed(0)
        model = make_model(name, args.image, gen)
        for batch in batches:
            tag = f"{name}_b{batch}"
            x = torch.randn(batch, 3, args.image, args.image, generator=gen)
            input_path = os.path.join(args.out, tag + ".input.npy")
            np.save(input_path, x.numpy())
            with torch.no_grad():
                ref = copy.deepcopy(model).to(args.device)(x.to(args.device)).cpu().numpy()
            onnx_path = os.path.join(args.out, tag + ".onnx")
            t0 = time.time()
            export(model, x, onnx_path)
            export_s = round(time.time() - t0, 1)
            for precision in precisions:
                r = {"model": name, "batch": batch, "precision": precision, "image": args.image,
                     "device": args.device, "cudnn_benchmark": args.cudnn_benchmark,
                     "export_s": export_s,
                     # Random weights can give every input the same class, which makes top-1
                     # agreement say nothing: the number of classes tells.
                     "ref_top1_classes": int(len(np.unique(ref.argmax(-1))))}
                # kiln: build, run against the reference, bench; a per-layer profile of each
                # CUDA plan, for the note.
                measure_kiln(args.kiln, args.out, f"{tag}_{precision}", onnx_path, "x", input_path,
                             ref, r, device=args.device, fp16=precision == "fp16",
                             classifier=True, profile=args.device == "cuda")
                measure_peers(model, x, precision, args.device, batch, ref, r)
                best = min(r[k] for k in ("eager_ms", "compile_ms") if k in r)
                for key in ("kiln_ms", "kiln_graph_ms"):
                    if key in r:
                        r[key.replace("_ms", "_speedup_vs_best_peer")] = best / r[key]
                results.append(r)
                with open(results_path, "w") as f:
                    json.dump(results, f, indent=1)
                print(json.dumps(r), flush=True)
    nan = float("nan")
    print(f"{'model':12} {'batch':>5} {'prec':>4} {'kiln':>9} {'kiln graph':>10} {'eager':>9} "
          f"{'compile':>9} {'best/kiln':>9} {'rel L2':>9} {'top-1':>6} {'build s':>7}")
    for r in results:
        k, kg = r.get("kiln_ms", nan), r.get("kiln_graph_ms", nan)
        eager, comp = r["eager_ms"], r.get("compile_ms", nan)
        # Against kiln's CUDA graph time where there is one (CUDA), else its plain enqueues (CPU).
        ratio = r.get("kiln_graph_speedup_vs_best_peer", r.get("kiln_speedup_vs_best_peer", nan))
        print(f"{r['model']:12} {r['batch']:5d} {r['precision']:>4} {k:9.3f} {kg:10.3f} "
              f"{eager:9.3f} {comp:9.3f} {ratio:9.2f} {r.get('rel_l2_vs_fp32', nan):9.2e} "
              f"{r.get('top1_agree', nan):6.3f} {r['kiln_build_s']:7.1f}")


if __name__ == "__main__":
    sys.exit(main())
