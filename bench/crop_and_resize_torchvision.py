#!/usr/bin/env python3
"""torchvision.ops.roi_align on the shapes, box counts, crop sizes and dtypes of
bench/crop_and_resize_bench.cu, timed the same way (CUDA events, median after warm-up, inputs
rotated among copies so the feature map is not L2-resident).

roi_align is the peer closest to CropAndResize in torchvision: boxes are converted to absolute
(x1, y1, x2, y2) pixel coordinates with the batch index in front, sampling_ratio=1 (one bilinear
sample per output bin, comparable work to CropAndResize's one sample per output element),
aligned=False. channels_last inputs via .to(memory_format=torch.channels_last).

Writes "case,type,format,ms" lines to --out (default crop_and_resize_torchvision.csv), which
crop_and_resize_bench reads with --torch-results to print one merged table, and prints its own
table last.

  python3 bench/crop_and_resize_torchvision.py [--runs N] [--out FILE]
"""
import argparse
import math
import random
import sys

import torch
import torchvision

CASES = [
    # name, label, inputs, N, C, H, W, boxes (K, or per image for 2 inputs), crop
    ("a", "[1,1024,50,68], 300 boxes, 14x14 (3 inputs)", 3, 1, 1024, 50, 68, 300, 14),
    ("b", "[1,256,200,272], 1000 boxes, 7x7 (3 inputs)", 3, 1, 256, 200, 272, 1000, 7),
    ("c", "[8,256,64,64], 100 boxes per image, 7x7 (2 inputs)", 2, 8, 256, 64, 64, 100, 7),
]
DTYPES = [("fp32", torch.float32), ("fp16", torch.float16), ("bf16", torch.bfloat16)]
FORMATS = ["linear", "channels_last"]
L2_FLUSH = 3 * 60 * 1024 * 1024


def random_boxes(count, seed):
    """Normalised (y1, x1, y2, x2) inside the image, half large and half small (as the bench)."""
    rng = random.Random(seed)
    out = []
    for k in range(count):
        large = k % 2 == 0
        hy = 0.3 + 0.6 * rng.random() if large else 0.02 + 0.18 * rng.random()
        hx = 0.3 + 0.6 * rng.random() if large else 0.02 + 0.18 * rng.random()
        y1 = rng.random() * (1 - hy)
        x1 = rng.random() * (1 - hx)
        out.append((y1, x1, y1 + hy, x1 + hx))
    return out


def median_ms(fn, copies, runs):
    for r in range(5):
        fn(r % copies)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for r in range(runs):
        starts[r].record()
        fn(r % copies)
        ends[r].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return times[len(times) // 2]


def copy_bandwidth(runs):
    n = 1 << 30
    a = torch.ones(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    ms = median_ms(lambda _: b.copy_(a), 1, runs)
    del a, b
    return 2.0 * n / (ms * 1e-3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--out", default="crop_and_resize_torchvision.csv")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU: torch.cuda.is_available() is False", file=sys.stderr)
        return 1
    dev = torch.cuda.get_device_properties(0)
    copy_bw = copy_bandwidth(20)
    print(f"device-to-device copy: {copy_bw / 1e9:.0f} GB/s (read + written)", file=sys.stderr)
    results = []  # (case, type, format, ms or None, floor bytes, note)
    for name, label, inputs, N, C, H, W, nboxes, crop in CASES:
        K = N * nboxes if inputs == 2 else nboxes
        norm = random_boxes(K, 1234)
        batch = [k // nboxes if inputs == 2 else k % N for k in range(K)]
        for tname, dtype in DTYPES:
            es = torch.finfo(dtype).bits // 8
            feature_bytes = N * C * H * W * es
            out_bytes = K * C * crop * crop * es
            copies = max(2, min(8, math.ceil(L2_FLUSH / (feature_bytes + out_bytes))))
            rois = torch.tensor(
                [[b, x1 * (W - 1), y1 * (H - 1), x2 * (W - 1), y2 * (H - 1)]
                 for b, (y1, x1, y2, x2) in zip(batch, norm)],
                dtype=dtype, device="cuda")
            for fmt in FORMATS:
                note = ""
                try:
                    feats = []
                    for i in range(copies):
                        x = torch.rand(N, C, H, W, device="cuda", dtype=torch.float32) * 2 - 1
                        x = x.to(dtype)
                        if fmt == "channels_last":
                            x = x.to(memory_format=torch.channels_last)
                        feats.append(x)
                    fn = lambda i: torchvision.ops.roi_align(
                        feats[i], rois, output_size=(crop, crop), spatial_scale=1.0,
                        sampling_ratio=1, aligned=False)
                    ms = median_ms(fn, copies, args.runs)
                    del feats
                except Exception as e:  # e.g. a dtype roi_align's CUDA kernel does not take
                    ms = None
                    note = f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"
                torch.cuda.empty_cache()
                results.append((name, tname, fmt, ms, feature_bytes + out_bytes, note))
    with open(args.out, "w") as f:
        f.write(f"# torchvision {torchvision.__version__}, torch {torch.__version__}, "
                f"{dev.name}, copy {copy_bw / 1e9:.0f} GB/s\n")
        f.write("case,type,format,ms\n")
        for name, tname, fmt, ms, _, _ in results:
            f.write(f"{name},{tname},{fmt},{ms if ms is not None else 0}\n")
    print(f"\ntorchvision.ops.roi_align (torchvision {torchvision.__version__}, torch "
          f"{torch.__version__}) on {dev.name}; copy bandwidth {copy_bw / 1e9:.0f} GB/s; "
          f"median of {args.runs} runs, inputs rotated; results in {args.out}")
    for name, label, *_ in CASES:
        print(f"\n({name}) {label}")
        print(f"{'type':5} {'format':14} {'floor MB':>9} {'roi ms':>9} {'%copy':>7}")
        for rname, tname, fmt, ms, floor, note in results:
            if rname != name:
                continue
            if ms is None:
                print(f"{tname:5} {fmt:14} {floor / 1e6:9.1f} {'n/a':>9} {'':>7} {note}")
            else:
                pct = floor / (ms * 1e-3) / copy_bw * 100
                print(f"{tname:5} {fmt:14} {floor / 1e6:9.1f} {ms:9.4f} {pct:6.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
