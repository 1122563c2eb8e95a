#!/usr/bin/env python3
"""Transformer speed on the GPU machine: kiln against PyTorch eager (scaled_dot_product_attention)
and torch.compile, FP16, measured in one run (issue 11, item 4).

Models, built there from their configurations with random weights (nothing can be downloaded):
  vit_b16   torchvision's vit_b_16, 224x224 images, batch 1 and 64
  bert_base transformers' BertModel (12 layers, hidden 768, 12 heads), sequence 128, batch 1 and 32

For each model and batch: PyTorch FP32 gives the reference output on one random input; the model
is exported to ONNX (opset 17, dynamo=False, FP32 weights, static shapes), `kiln build --fp16`
builds it for CUDA (the build time is recorded), `kiln run` on the same input is compared with the
FP32 reference (relative L2, and top-1 agreement for the classifier), and `kiln bench` times it
with and without a CUDA graph (GPU compute time with CUDA events, median). The peers run in FP16
(model.half()), TF32 off: eager, and torch.compile (mode "max-autotune-no-cudagraphs" is not used:
default mode at the large batch, "reduce-overhead", i.e. CUDA graphs, at batch 1, as the issue's
figures were measured), each timed with CUDA events around every iteration, median of 100 after
warm-up.

usage: transformers_h200.py KILN OUT_DIR [--only vit_b16|bert_base] [--batches 1,64]
Writes OUT_DIR/results.json and prints a table; every step's log lands in OUT_DIR.
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import torch

from bench_common import measure_kiln, rel_l2, time_cuda

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def vit_b16():
    import torchvision
    model = torchvision.models.vit_b_16(weights=None)
    # torchvision zero-initialises the head: its output would be all zeros, hiding every
    # difference from the reference (and making top-1 agreement meaningless).
    with torch.no_grad():
        for p in model.parameters():
            if p.abs().sum() == 0:
                p.normal_(0, 0.05)
    return model


def bert_base():
    import transformers
    config = transformers.BertConfig()  # bert-base: 12 layers, 768 hidden, 12 heads
    model = transformers.BertModel(config, add_pooling_layer=False)
    return model


class BertHidden(torch.nn.Module):
    """BertModel's last hidden state from token ids alone (every token attended)."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids):
        return self.bert(input_ids=input_ids).last_hidden_state


MODELS = {
    "vit_b16": {"make": vit_b16, "batches": [1, 64], "classifier": True},
    "bert_base": {"make": lambda: BertHidden(bert_base()), "batches": [1, 32], "classifier": False},
}


def make_input(name, batch, gen):
    if name == "vit_b16":
        return torch.randn(batch, 3, 224, 224, generator=gen)
    return torch.randint(0, 30522, (batch, 128), generator=gen, dtype=torch.int64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("out")
    ap.add_argument("--only")
    ap.add_argument("--batches")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results_path = os.path.join(args.out, "results.json")
    results = []
    gen = torch.Generator().manual_seed(0)
    for name, spec in MODELS.items():
        if args.only and name != args.only:
            continue
        batches = [int(b) for b in args.batches.split(",")] if args.batches else spec["batches"]
        torch.manual_seed(0)
        model = spec["make"]().eval()
        for batch in batches:
            r = {"model": name, "batch": batch}
            tag = f"{name}_b{batch}"
            x = make_input(name, batch, gen)
            onnx_path = os.path.join(args.out, tag + ".onnx")
            input_name = "x" if name == "vit_b16" else "input_ids"
            with torch.no_grad():
                ref = model.cuda().float()(x.cuda()).float().cpu().numpy()
            np.save(os.path.join(args.out, tag + ".input.npy"), x.numpy())
            t0 = time.time()
            # torch 2's nn.MultiheadAttention takes a fused fast path in eval mode without
            # grad (aten::_native_multi_head_attention), which the ONNX exporter cannot write;
            # the exported graph must be the plain MatMul/Softmax one a user's export gives.
            if hasattr(torch.backends, "mha"):
                torch.backends.mha.set_fastpath_enabled(False)
            with torch.no_grad():
                torch.onnx.export(model.cpu().float(), (x,), onnx_path, opset_version=17,
                                  dynamo=False, input_names=[input_name], output_names=["y"])
            if hasattr(torch.backends, "mha"):
                torch.backends.mha.set_fastpath_enabled(True)
            r["export_s"] = round(time.time() - t0, 1)
            # kiln: build, run against the reference, bench; a per-layer profile of the large
            # batch, for the note.
            measure_kiln(args.kiln, args.out, tag, onnx_path, input_name,
                         os.path.join(args.out, tag + ".input.npy"), ref, r,
                         classifier=spec["classifier"], profile=batch > 1)
            # The peers, FP16.
            half = model.cuda().half()
            xh = x.cuda() if name == "bert_base" else x.cuda().half()
            with torch.no_grad():
                r["eager_ms"] = time_cuda(lambda: half(xh))
                t0 = time.time()
                mode = "reduce-overhead" if batch == 1 else "default"
                compiled = torch.compile(half, mode=mode)
                compiled(xh)
                compiled(xh)
                r["compile_s"] = round(time.time() - t0, 1)
                r["compile_mode"] = mode
                r["compile_ms"] = time_cuda(lambda: compiled(xh))
                out16 = half(xh).float().cpu().numpy()
                r["torch_fp16_rel_l2_vs_fp32"] = rel_l2(out16, ref)
            torch._dynamo.reset()
            model.cpu().float()
            best = min(r["eager_ms"], r["compile_ms"])
            for key in ("kiln_ms", "kiln_graph_ms"):
                if key in r:
                    r[key.replace("_ms", "_speedup_vs_best_peer")] = best / r[key]
            results.append(r)
            json.dump(results, open(results_path, "w"), indent=1)
            print(json.dumps(r), flush=True)
    print(f"{'model':10} {'batch':>5} {'kiln':>9} {'kiln graph':>11} {'eager':>9} "
          f"{'compile':>9} {'best/kiln':>9} {'rel L2':>9} {'build s':>8}")
    for r in results:
        k, kg = r.get("kiln_ms", float("nan")), r.get("kiln_graph_ms", float("nan"))
        best = min(r["eager_ms"], r["compile_ms"])
        print(f"{r['model']:10} {r['batch']:5d} {k:9.3f} {kg:11.3f} {r['eager_ms']:9.3f} "
              f"{r['compile_ms']:9.3f} {best / min(k, kg):9.2f} "
              f"{r.get('rel_l2_vs_fp32', float('nan')):9.2e} {r['kiln_build_s']:8.1f}")


if __name__ == "__main__":
    sys.exit(main())
