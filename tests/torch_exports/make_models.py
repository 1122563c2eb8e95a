#!/usr/bin/env python3
"""Exports small transformer-era models from PyTorch to ONNX, as users export them, with the
input and PyTorch's output for each: torchvision's VisionTransformer, Swin, ConvNeXt and a small
EfficientNet (SiLU, squeeze-excitation), and
torch.nn.TransformerEncoder (post-norm with ReLU, pre-norm with GELU, a padding mask, a causal
mask, a residual stream of large activations), at opset 17 and, for some, opset 13.
Configurations are small (a few hundred thousand weights) so the test stays quick; every
architectural feature of the full models is there (class token, position embedding, shifted
windows with padding and masks, patch merging, depthwise convolutions, layer scale, LayerNorm
over channels, GELU, multi-head attention).

Runs on Debian's python3-torch (1.13) and python3-torchvision (0.14) with Debian's python3 in
isolated mode (-I): no PyPI package is involved.
More are exported with dynamic axes (batch; batch and sequence) and run at shapes other than
the exported one: ResNet-18, MobileNetV3-small, a TransformerEncoder, a token encoder with a
padding mask, and three decoders whose position ids and causal masks follow the sequence length
(one with rotary embeddings and a padding mask by index math, as transformers 5 writes Llama).
usage: make_models.py OUT_DIR [--static | --small]
       (writes NAME.onnx, NAME.input.npy, NAME.expected.npy, models.txt)
"""

import functools
import os
import sys

import numpy as np
import torch
import torchvision
from torchvision.models.convnext import CNBlockConfig
from torchvision.models.efficientnet import EfficientNet, MBConvConfig


def randomize_zeros(model):
    # torchvision zero-initialises some weights (ViT's head, layer scales); a zero would hide
    # whatever feeds it, so every all-zero parameter gets small random values instead.
    with torch.no_grad():
        for p in model.parameters():
            if p.abs().sum() == 0:
                p.normal_(0, 0.05)
    return model


class PaddedEncoder(torch.nn.Module):
    """A BERT-style encoder over a batch whose sequences have different lengths: a padding mask
    (True where a token is padding) keeps attention off the padded positions."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2,
                                                   enable_nested_tensor=False)
        lengths = torch.tensor([10, 7, 4])
        self.register_buffer("padding", torch.arange(10)[None, :] >= lengths[:, None])

    def forward(self, x):
        return self.encoder(x, src_key_padding_mask=self.padding)


class LargeActivationEncoder(torch.nn.Module):
    """A pre-norm encoder whose residual stream carries values in the hundreds, as deep
    transformers' do: a row's sum of squares (about 2.6e6 over 64 channels) overflows FP16
    (65504), so LayerNorm and softmax must keep their statistics in FP32 for an FP16 plan to stay
    finite (issue 11, item 3). The final LayerNorm brings the output back to unit scale."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                                 batch_first=True, activation="gelu",
                                                 norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2,
                                                   norm=torch.nn.LayerNorm(64))

    def forward(self, x):
        return self.encoder(x * 200.0)


class CausalEncoder(torch.nn.Module):
    """A decoder-style stack: an encoder with a causal attention mask, as GPT-like models use."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                 batch_first=True, activation="gelu",
                                                 norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(12))

    def forward(self, x):
        return self.encoder(x, mask=self.mask)


def efficientnet():
    """A small EfficientNet: MBConv blocks with squeeze-excitation and SiLU, which PyTorch exports
    as Sigmoid then Mul (ONNX has no SiLU). BatchNorm statistics of one random batch (as
    bench/cnn_h200.py gives MobileNetV2), so that the activations keep a trained network's range
    instead of shrinking towards FP16's subnormals with the initial ones."""
    block = functools.partial(MBConvConfig, width_mult=1.0, depth_mult=1.0)
    setting = [block(1, 3, 1, 16, 16, 1), block(4, 3, 2, 16, 24, 2), block(4, 5, 2, 24, 40, 1)]
    model = EfficientNet(setting, dropout=0.2, num_classes=10, last_channel=64)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # the plain average of the batches seen: here the one batch's
    model.train()
    with torch.no_grad():
        model(torch.randn(8, 3, 32, 32))
    return model.eval()


def models():
    vit = torchvision.models.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
        num_classes=10)
    # 36x36 input: 9x9 patches, windows of 4 need padding (Pad, Mod), and patch merging halves
    # an odd size.
    swin = torchvision.models.swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=24, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
        num_classes=10)
    convnext = torchvision.models.ConvNeXt(
        block_setting=[CNBlockConfig(24, 48, 2), CNBlockConfig(48, None, 2)], num_classes=10)
    encoder_relu = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                         batch_first=True), num_layers=2)
    encoder_gelu_pre_norm = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d_model=48, nhead=6, dim_feedforward=96,
                                         batch_first=True, activation="gelu", norm_first=True),
        num_layers=2)
    # (name, model, input shape, opset): opset 17 exports LayerNorm as LayerNormalization, opset 13
    # as its ReduceMean/Sub/Pow/Sqrt/Div pattern.
    return [
        ("vit", vit, (2, 3, 32, 32), 17),
        ("vit_opset13", vit, (2, 3, 32, 32), 13),
        ("swin", swin, (1, 3, 36, 36), 17),
        ("convnext", convnext, (2, 3, 32, 32), 17),
        ("efficientnet", efficientnet(), (2, 3, 32, 32), 17),
        ("encoder_relu", encoder_relu, (2, 16, 64), 17),
        ("encoder_relu_opset13", encoder_relu, (2, 16, 64), 13),
        ("encoder_gelu_pre_norm", encoder_gelu_pre_norm, (3, 10, 48), 17),
        ("padded_encoder", PaddedEncoder(), (3, 10, 32), 17),
        ("causal_encoder", CausalEncoder(), (2, 12, 32), 17),
        ("causal_encoder_opset13", CausalEncoder(), (2, 12, 32), 13),
        ("large_activations", LargeActivationEncoder(), (2, 16, 64), 17),
        ("large_activations_opset13", LargeActivationEncoder(), (2, 16, 64), 13),
    ]


class TokenEncoder(torch.nn.Module):
    """A BERT-style encoder over token ids with an attention mask, two inputs that share the batch
    and sequence axes, as Hugging Face models are exported (input_ids, attention_mask)."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(100, 32)
        layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                 batch_first=True)
        # Nested tensors (the fast path) would zero the padded positions; the export computes them.
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2,
                                                   enable_nested_tensor=False)

    def forward(self, ids, mask):
        return self.encoder(self.embed(ids), src_key_padding_mask=mask == 0)


class CausalDecoder(torch.nn.Module):
    """A decoder-only language model as written today: position ids by torch.arange(sequence)
    (an ONNX Range on the input's shape) and a causal mask by triu(full(-inf)) (ConstantOfShape
    and Trilu), both of run-time length."""

    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(100, 32)
        self.pos = torch.nn.Embedding(64, 32)
        layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                 batch_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(32, 100)

    def forward(self, ids):
        s = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(s))
        mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        return self.head(self.blocks(x, mask=mask))


class BufferDecoder(torch.nn.Module):
    """GPT-2's and BERT's way: position ids and the causal mask sliced from buffers longer than
    the sequence (x[:, :sequence], an ONNX Slice whose end is the input's shape)."""

    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(100, 32)
        self.pos = torch.nn.Embedding(64, 32)
        self.register_buffer("position_ids", torch.arange(64)[None])
        self.register_buffer("bias", torch.tril(torch.ones(64, 64, dtype=torch.bool)))
        self.qkv = torch.nn.Linear(32, 96)
        self.out = torch.nn.Linear(32, 32)

    def forward(self, ids):
        s = ids.shape[1]
        x = self.tok(ids) + self.pos(self.position_ids[:, :s])
        q, k, v = self.qkv(x).split(32, dim=2)
        w = q @ k.transpose(1, 2) / 32 ** 0.5
        w = torch.where(self.bias[:s, :s], w, torch.tensor(-1e4))
        return self.out(w.softmax(-1) @ v)


class RotaryPaddedDecoder(torch.nn.Module):
    """Llama's way, as transformers 5 writes it: rotary position embeddings (cos and sin of
    arange(sequence) times inverse frequencies) and a padding mask read by index math from the
    flattened attention mask (batch index * sequence + key position, int64 at run time), beside
    the causal one. Inputs token ids and an attention mask, both [batch, sequence]."""

    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(100, 32)
        self.qkv = torch.nn.Linear(32, 96)
        self.out = torch.nn.Linear(32, 32)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8)))

    def forward(self, ids, mask):
        b, n = ids.shape
        freqs = torch.arange(n, dtype=torch.float32)[:, None] * self.inv_freq[None]
        emb = torch.cat([freqs, freqs], -1)
        cos, sin = emb.cos(), emb.sin()
        q, k, v = self.qkv(self.tok(ids)).view(b, n, 3, 4, 8).permute(2, 0, 3, 1, 4)

        def rotate(t):
            return torch.cat([-t[..., 4:], t[..., :4]], -1)

        q = q * cos + rotate(q) * sin
        k = k * cos + rotate(k) * sin
        batch_index = torch.arange(b)[:, None, None]
        query, key = torch.arange(n)[None, :, None], torch.arange(n)[None, None, :]
        allowed = (key <= query) & (mask.flatten()[batch_index * n + key] > 0)
        w = q @ k.transpose(-1, -2) / 8 ** 0.5
        w = torch.where(allowed[:, None], w, torch.tensor(-1e4))
        return self.out((w.softmax(-1) @ v).transpose(1, 2).reshape(b, n, 32))


def token_batch(batch, seq):
    ids = torch.randint(0, 100, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[0, seq // 2:] = 0  # the first sequence is padded after its first half
    return {"ids": ids, "mask": mask}


def dynamic_models():
    """Exports with dynamic axes (torch.onnx.export's dynamic_axes), as most users write them: the
    model is exported at one shape and run at another, which kiln builds for (issue 10)."""
    encoder = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                         batch_first=True), num_layers=2)
    # (name, model, export shape, run shape, dynamic axes of x and y)
    return [
        ("resnet18_dynamic_batch", torchvision.models.resnet18(num_classes=10), (2, 3, 32, 32),
         (3, 3, 32, 32), {0: "batch"}),
        ("mobilenet_v3_small_dynamic_batch", torchvision.models.mobilenet_v3_small(num_classes=10),
         (2, 3, 32, 32), (5, 3, 32, 32), {0: "batch"}),
        ("encoder_dynamic_batch_and_sequence", encoder, (2, 10, 32), (3, 7, 32),
         {0: "batch", 1: "sequence"}),
    ]


# Optimization profiles for the dynamic exports (kiln build --shapes x:MIN,OPT,MAX): one plan per
# model, run at two shapes inside its range, neither of them the opt. (name, min, opt, max, runs)
PROFILES = {
    "resnet18_dynamic_batch": ((1, 3, 32, 32), (2, 3, 32, 32), (4, 3, 32, 32),
                               [(3, 3, 32, 32), (1, 3, 32, 32)]),
    "mobilenet_v3_small_dynamic_batch": ((1, 3, 32, 32), (2, 3, 32, 32), (6, 3, 32, 32),
                                         [(5, 3, 32, 32), (1, 3, 32, 32)]),
    # Batch and sequence both vary: its attention slices q, k and v to the end of the axes that
    # vary, and reshapes to [sequence, batch * heads, ...] and back to [sequence, batch, ...],
    # dims it takes from the input (ShuffleParams::reshapeDimsOf).
    "encoder_dynamic_batch_and_sequence": ((1, 4, 32), (2, 10, 32), (4, 16, 32),
                                           [(3, 7, 32), (1, 16, 32)]),
}
# Profile lines are "MODEL NAME:MIN,OPT,MAX[+NAME:...] RUN...": one --shapes per input; a run's
# input NAME is RUN.NAME.npy.


def dims(d):
    return "x".join(str(v) for v in d)


def main():
    out = sys.argv[1]
    # --static: only the static-shape models. --small: all but the dynamic ResNet-18 (43 MB; the
    # GPU bundle, which must stay small, carries the rest)
    static_only = "--static" in sys.argv[2:]
    small = "--small" in sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    names = []
    profiles = []  # "MODEL SHAPES RUN..." for kiln build --shapes, then kiln run PLAN per RUN
    for name, model, shape, run_shape, axes in [] if static_only else dynamic_models():
        if small and name == "resnet18_dynamic_batch":
            continue
        model = randomize_zeros(model).eval()
        path = os.path.join(out, name + ".onnx")
        y_axes = {0: axes[0]} if len(shape) == 4 else axes
        torch.onnx.export(model, torch.randn(*shape), path, opset_version=17, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": axes, "y": y_axes})
        x = torch.randn(*run_shape)
        with torch.no_grad():
            y = model(x)
        np.save(os.path.join(out, name + ".input.npy"), x.numpy())
        np.save(os.path.join(out, name + ".expected.npy"), y.numpy())
        names.append(name)
        if name not in PROFILES:
            continue
        lo, opt, hi, runs = PROFILES[name]
        profiles.append(f"{name} x:{dims(lo)},{dims(opt)},{dims(hi)} " +
                        " ".join(f"{name}.profile{k}" for k in range(len(runs))))
        for k, run in enumerate(runs):
            x = torch.randn(*run)
            with torch.no_grad():
                y = model(x)
            np.save(os.path.join(out, f"{name}.profile{k}.x.npy"), x.numpy())
            np.save(os.path.join(out, f"{name}.profile{k}.expected.npy"), y.numpy())
            names.append(f"{name}.profile{k}")
    if not static_only:
        # Two inputs sharing batch and sequence, one profile over both, run at two or three
        # shapes: the token encoder, and the rotary decoder from one token to 32.
        for name, model, spec, runs in [
                ("token_encoder_dynamic", TokenEncoder(), ((1, 4), (2, 10), (4, 16)),
                 [(3, 7), (2, 16)]),
                ("rotary_padded_decoder_dynamic", RotaryPaddedDecoder(), ((1, 1), (2, 16), (4, 32)),
                 [(3, 7), (1, 1), (4, 29)])]:
            model = randomize_zeros(model).eval()
            example = token_batch(2, 10)
            axes = {0: "batch", 1: "sequence"}
            torch.onnx.export(model, (example["ids"], example["mask"]),
                              os.path.join(out, name + ".onnx"), opset_version=17,
                              input_names=["ids", "mask"], output_names=["y"],
                              dynamic_axes={"ids": axes, "mask": axes, "y": axes})
            spec = ",".join(dims(d) for d in spec)
            profiles.append(f"{name} ids:{spec}+mask:{spec} " +
                            " ".join(f"{name}.profile{k}" for k in range(len(runs))))
            for k, (batch, seq) in enumerate(runs):
                feed = token_batch(batch, seq)
                with torch.no_grad():
                    y = model(feed["ids"], feed["mask"])
                for n, v in feed.items():
                    np.save(os.path.join(out, f"{name}.profile{k}.{n}.npy"), v.numpy())
                np.save(os.path.join(out, f"{name}.profile{k}.expected.npy"), y.numpy())
                names.append(f"{name}.profile{k}")
        # Decoders whose shape arithmetic reaches the data (position ids, causal masks): one
        # profile from a single token (a generation step) to 32, run at three shapes.
        for name, model in [("causal_decoder_dynamic", CausalDecoder()),
                            ("buffer_decoder_dynamic", BufferDecoder())]:
            model = randomize_zeros(model).eval()
            axes = {0: "batch", 1: "sequence"}
            torch.onnx.export(model, torch.randint(0, 100, (2, 10)),
                              os.path.join(out, name + ".onnx"), opset_version=17,
                              input_names=["ids"], output_names=["y"],
                              dynamic_axes={"ids": axes, "y": axes})
            spec = ",".join(dims(d) for d in ((1, 1), (2, 16), (4, 32)))
            runs = [(3, 7), (1, 1), (4, 29)]
            profiles.append(f"{name} ids:{spec} " +
                            " ".join(f"{name}.profile{k}" for k in range(len(runs))))
            for k, (batch, seq) in enumerate(runs):
                ids = torch.randint(0, 100, (batch, seq))
                with torch.no_grad():
                    y = model(ids)
                np.save(os.path.join(out, f"{name}.profile{k}.ids.npy"), ids.numpy())
                np.save(os.path.join(out, f"{name}.profile{k}.expected.npy"), y.numpy())
                names.append(f"{name}.profile{k}")
    for name, model, shape, opset in models():
        model = randomize_zeros(model).eval()
        x = torch.randn(*shape)
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(model, x, path, opset_version=opset, input_names=["x"],
                          output_names=["y"])
        with torch.no_grad():
            y = model(x)
        np.save(os.path.join(out, name + ".input.npy"), x.numpy())
        np.save(os.path.join(out, name + ".expected.npy"), y.numpy())
        names.append(name)
    with open(os.path.join(out, "models.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    with open(os.path.join(out, "profiles.txt"), "w") as f:
        f.write("".join(line + "\n" for line in profiles))
    print(f"torch_exports: exported {len(names)} models with torch {torch.__version__}, "
          f"torchvision {torchvision.__version__}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
