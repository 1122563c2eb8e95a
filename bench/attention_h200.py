#!/usr/bin/env python3
"""Fused attention alone on the GPU machine: kiln's Attention layer against PyTorch's
scaled_dot_product_attention (eager, FP16), measured in one run.

The models that decide issue 11's speed spend about a third of their time in attention at short
sequences (ViT-B/16: 197 tokens; BERT-base: 128), where a flash kernel's tiles are mostly
partial. This script isolates that layer so that a kernel change can be timed without building a
whole network (a ViT build takes about 70 s).

Each configuration is one module as a user writes it: the packed q/k/v projection's output
[B, S, 3 E] is split into heads, softmax(Q K^T * scale) V is written out as MatMul, Mul, Softmax
and MatMul (torch 1.13 and 2 export it alike), and the heads are merged back to [B, S, E]. kiln
recognises the attention and reads Q, K and V as head views of the packed input. The module is
exported to ONNX (opset 17, static shapes), built with `kiln build --fp16`, compared with the FP32
PyTorch output on the same random input, and benched (CUDA graph, median; the Attention layer's
own median from the per-layer profile beside it). The peer is the same
computation through F.scaled_dot_product_attention in FP16 (flash or memory-efficient kernels),
timed with CUDA events, median of 100.

usage: attention_h200.py KILN OUT_DIR [--only NAME,...]
Prints one JSON line per configuration and a table; every step's log lands in OUT_DIR.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

from bench_common import measure_kiln, time_cuda

# name: batch, heads, sequence, head size
CONFIGS = {
    "vit_b64": (64, 12, 197, 64),
    "bert_b32": (32, 12, 128, 64),
    "vit_b1": (1, 12, 197, 64),
    "long_s1024": (4, 12, 1024, 64),
    "d128_s512": (8, 16, 512, 128),
}


class PackedAttention(torch.nn.Module):
    def __init__(self, heads, head_size, sdpa):
        super().__init__()
        self.heads, self.head_size, self.sdpa = heads, head_size, sdpa

    def forward(self, x):
        b, s, _ = x.shape
        qkv = x.reshape(b, s, 3, self.heads, self.head_size).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v)
        else:
            scores = torch.matmul(q, k.transpose(-2, -1)) * (self.head_size**-0.5)
            y = torch.matmul(torch.softmax(scores, dim=-1), v)
        return y.transpose(1, 2).reshape(b, s, self.heads * self.head_size)


def attention_layer_ms(profile_log):
    """The Attention layer's median and tactic from a `kiln bench --profile` log. kiln's whole
    plan also copies the merged heads out to the network output (a Shuffle), where in a network
    the next Linear reads them in place; SDPA's figure includes its own transpose copy."""
    try:
        for line in open(profile_log):
            f = line.split()
            if len(f) >= 8 and f[2] == "Attention":
                return {"kiln_attention_tactic": f[3], "kiln_attention_ms": float(f[5])}
    except OSError:
        pass
    return {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("out")
    ap.add_argument("--only")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = args.only.split(",") if args.only else list(CONFIGS)
    gen = torch.Generator().manual_seed(0)
    results = []
    for name in names:
        b, h, s, d = CONFIGS[name]
        r = {"config": name, "batch": b, "heads": h, "seq": s, "head_size": d}
        x = torch.randn(b, s, 3 * h * d, generator=gen)
        explicit = PackedAttention(h, d, sdpa=False).eval()
        with torch.no_grad():
            ref = explicit(x.cuda()).float().cpu().numpy()
        onnx_path = os.path.join(args.out, name + ".onnx")
        input_path = os.path.join(args.out, name + ".input.npy")
        np.save(input_path, x.numpy())
        with torch.no_grad():
            torch.onnx.export(explicit, (x,), onnx_path, opset_version=17, dynamo=False,
                              input_names=["x"], output_names=["y"])
        measure_kiln(args.kiln, args.out, name, onnx_path, "x", input_path, ref, r,
                     profile=True)
        fused = PackedAttention(h, d, sdpa=True).cuda().half()
        xh = x.cuda().half()
        with torch.no_grad():
            r["sdpa_ms"] = time_cuda(lambda: fused(xh))
        r.update(attention_layer_ms(os.path.join(args.out, name + ".profile.log")))
        if "kiln_attention_ms" in r:
            r["speedup_vs_sdpa"] = r["sdpa_ms"] / r["kiln_attention_ms"]
        results.append(r)
        print(json.dumps(r), flush=True)
    print(f"{'config':11} {'B':>3} {'H':>3} {'S':>5} {'D':>4} {'kiln graph':>11} "
          f"{'attention':>10} {'sdpa':>8} {'sdpa/attn':>9} {'rel L2':>9}")
    for r in results:
        kg = r.get("kiln_graph_ms", float("nan"))
        ka = r.get("kiln_attention_ms", float("nan"))
        print(f"{r['config']:11} {r['batch']:3d} {r['heads']:3d} {r['seq']:5d} "
              f"{r['head_size']:4d} {kg:11.4f} {ka:10.4f} {r['sdpa_ms']:8.4f} "
              f"{r['sdpa_ms'] / ka:9.2f} {r.get('rel_l2_vs_fp32', float('nan')):9.2e}")


if __name__ == "__main__":
    sys.exit(main())
