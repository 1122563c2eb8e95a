#!/usr/bin/env python3
"""Decoder-only language models from Hugging Face `transformers` (GPT-2 and Llama, built from a
small config with random weights), exported as users export them for dynamic batch and sequence
(torch.onnx.export, opset 17, dynamo=False, dynamic_axes), built by kiln into one CUDA profile
plan (sequence 1 to 64) and run at three shapes inside it, each compared with PyTorch's logits on
the same input. A correctness check on the GPU machine, where `transformers` is (issue 10).
usage: hf_decoders_h200.py KILN OUT_DIR [--fp16]
Prints one line per model and shape; exit 1 when any export, build, run or comparison fails."""

import os
import subprocess
import sys

import numpy as np
import torch


def models():
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
    return {
        "gpt2": lambda: GPT2LMHeadModel(GPT2Config(
            n_layer=2, n_embd=64, n_head=4, vocab_size=1000, n_positions=128,
            attn_implementation="eager")),
        "llama": lambda: LlamaForCausalLM(LlamaConfig(
            num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=1000, max_position_embeddings=128,
            attn_implementation="eager")),
    }


class Logits(torch.nn.Module):
    """(input_ids, attention_mask) -> logits, without a cache (one full forward, as an export for
    scoring). The mask is given, as tokenizers give it: without one, transformers 5 looks for
    packed sequences with aten::diff, which torch.onnx cannot export."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, mask):
        return self.model(input_ids=ids, attention_mask=mask, use_cache=False).logits


def batch(b, s):
    ids = torch.randint(0, 1000, (b, s))
    mask = torch.ones(b, s, dtype=torch.int64)
    if s > 2:
        mask[0, : s // 3] = 0  # the first sequence is left-padded, as generation batches are
    return ids, mask


def tail(text, n=4):
    return " | ".join(text.strip().splitlines()[-n:])


def main():
    kiln, out = sys.argv[1], sys.argv[2]
    fp16 = "--fp16" in sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    failed = False
    for name, make in models().items():
        torch.manual_seed(0)
        model = Logits(make().eval())
        path = os.path.join(out, name + ".onnx")
        axes = {0: "batch", 1: "sequence"}
        try:
            torch.onnx.export(model, batch(2, 16), path, opset_version=17, dynamo=False,
                              input_names=["ids", "mask"], output_names=["logits"],
                              dynamic_axes={"ids": axes, "mask": axes, "logits": axes})
        except Exception as e:  # the exporter's failure is the finding
            print(f"FAIL {name}: export: {type(e).__name__}: {str(e)[:300]}")
            failed = True
            continue
        plan = os.path.join(out, name + ".plan")
        spec = "1x1,2x32,4x64"
        build = subprocess.run([kiln, "build", "--onnx", path, "--shapes", "ids:" + spec,
                                "--shapes", "mask:" + spec, "--device", "cuda", "--save", plan] +
                               (["--fp16"] if fp16 else []), capture_output=True, text=True)
        if build.returncode != 0:
            print(f"FAIL {name}: kiln build: {tail(build.stdout + build.stderr)}")
            failed = True
            continue
        for b, seq in [(3, 17), (1, 1), (4, 64)]:
            ids, mask = batch(b, seq)
            with torch.no_grad():
                want = model(ids, mask).numpy()
            feeds = []
            for input_name, value in (("ids", ids), ("mask", mask)):
                feed = os.path.join(out, f"{name}.{b}x{seq}.{input_name}.npy")
                np.save(feed, value.numpy())
                feeds += ["--input", f"{input_name}={feed}"]
            result = os.path.join(out, f"{name}.{b}x{seq}")
            run = subprocess.run([kiln, "run", plan] + feeds + ["--output-dir", result],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"FAIL {name} {b}x{seq}: kiln run: {tail(run.stdout + run.stderr)}")
                failed = True
                continue
            got = np.load(os.path.join(result, "logits.npy")).astype(np.float64)
            diff = np.abs(got - want)
            rel = float(np.linalg.norm(diff) / max(np.linalg.norm(want), 1e-30))
            ok = got.shape == want.shape and rel < (2e-3 if fp16 else 1e-5)
            failed = failed or not ok
            print(f"{'pass' if ok else 'FAIL'} {name} {b}x{seq}: logits {list(want.shape)}, "
                  f"max |diff| {diff.max():.3g}, relative L2 {rel:.3g}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
