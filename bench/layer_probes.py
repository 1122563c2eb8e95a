#!/usr/bin/env python3
"""Single-layer ONNX models at the shapes where kiln's own CUDA kernels decide a network's speed,
for timing one kernel against the library tactics and for Nsight Compute, without building a
whole network:

  attn_vit_b64.onnx   ViT-B/16 b64's attention (64 x 12 heads x 197 tokens, head size 64), written
                      out as a user writes it: the packed q/k/v split into heads, softmax(Q K^T / 8) V
  ln_vit_b64.onnx     ViT-B/16 b64's LayerNorm (12608 rows of 768)
  dw_mbv2_b64.onnx    MobileNetV2 b64's features.1 depthwise convolution with its ReLU6
                      (32 channels, 112 x 112, stride 1)

Runs with Debian's torch 1.13 (opset 17). On the GPU machine, for each model:
  kiln build --onnx M.onnx --device cuda --fp16 --save M.plan --verbose   # every tactic's time
  kiln bench M.plan --profile                                             # the layer alone
  ncu --clock-control none --kernel-name regex:flashAttention --launch-skip 2 --launch-count 1 \\
      --section SpeedOfLight --section WarpStateStats --section SourceCounters \\
      --metrics regex:smsp__pcsamp_warps_issue_stalled_.* kiln bench M.plan --duration 0 \\
      --iterations 3 --warmup-ms 0 --no-progress
(kernel names: flashAttentionKernel, warpRowsKernel, DepthwiseStripOp).

usage: layer_probes.py OUT_DIR
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention_h200 import PackedAttention  # noqa: E402


def export(model, shape, path):
    torch.onnx.export(model.eval(), (torch.randn(*shape),), path, input_names=["x"],
                      output_names=["y"], opset_version=17)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    export(PackedAttention(12, 64, False), (64, 197, 3 * 768), os.path.join(out, "attn_vit_b64.onnx"))
    export(torch.nn.LayerNorm(768, eps=1e-6), (64, 197, 768), os.path.join(out, "ln_vit_b64.onnx"))
    export(torch.nn.Sequential(torch.nn.Conv2d(32, 32, 3, padding=1, groups=32), torch.nn.ReLU6()),
           (64, 32, 112, 112), os.path.join(out, "dw_mbv2_b64.onnx"))
    print(f"wrote attn_vit_b64.onnx, ln_vit_b64.onnx, dw_mbv2_b64.onnx to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
