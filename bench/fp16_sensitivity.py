#!/usr/bin/env python3
"""How far FP16 rounding alone moves a network's output: the floor under any FP16 plan's error.

Issue 9 asks FP16 plans for a relative L2 error below 2e-3 against FP32 PyTorch. Whether that is
reachable depends on the network as much as on the engine: an ill-conditioned network amplifies
the rounding of its input, weights and activations whatever computes it. This script takes the
models of `cnn_h200.py` (same construction, same seeds: MobileNetV2 with BatchNorm statistics of one
random batch, ResNet-50 with its initial ones), computes the reference in FP64 on the CPU, and
rounds one thing at a time to FP16 with everything else still exact in FP64:
  input        the image (an FP16 plan's first reformat does this)
  weights      every convolution's and the classifier's weights (BatchNorm left unrounded)
  activations  every BatchNorm's and ReLU(6)'s output (an FP16 plan's stored tensors)
  all          the three together (close to what an FP16 engine computes, FP32 accumulation aside)
A row above the aim says no FP16 plan can meet it on that network; the engine's own error (kernels,
summation order, fused epilogues) comes on top. CPU only, a few minutes on two cores.

usage: fp16_sensitivity.py [--only resnet50|mobilenet_v2] [--batch N] [--image S]
"""

import argparse
import copy

import torch

from cnn_h200 import MODELS, make_model


def rel_l2(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


def round_outputs(model, kinds):
    """Rounds the output of every module of the given kinds to FP16 (and back), in place."""
    for m in model.modules():
        if isinstance(m, kinds):
            m.register_forward_hook(lambda _m, _i, out: out.half().double())
    return model


def round_weights(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
                m.weight.copy_(m.weight.half().double())
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=list(MODELS))
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--image", type=int, default=224)
    args = ap.parse_args()
    acts = (torch.nn.BatchNorm2d, torch.nn.ReLU, torch.nn.ReLU6)
    print(f"{'model':<14} {'rounded to FP16':<13} {'rel L2 vs FP64':>15}")
    for name in [args.only] if args.only else list(MODELS):
        gen = torch.Generator().manual_seed(0)
        torch.manual_seed(0)
        model = make_model(name, args.image, gen)
        x = torch.randn(args.batch, 3, args.image, args.image, generator=gen).double()
        exact = copy.deepcopy(model).double()
        with torch.no_grad():
            ref = exact(x)
            rows = {
                "fp32 (check)": model(x.float()),
                "input": exact(x.half().double()),
                "weights": round_weights(copy.deepcopy(exact))(x),
                "activations": round_outputs(copy.deepcopy(exact), acts)(x),
                "all": round_outputs(round_weights(copy.deepcopy(exact)), acts)(x.half().double()),
            }
        for what, y in rows.items():
            print(f"{name:<14} {what:<13} {rel_l2(y, ref):15.2e}", flush=True)


if __name__ == "__main__":
    main()
