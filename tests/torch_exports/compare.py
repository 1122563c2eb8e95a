#!/usr/bin/env python3
"""Compares kiln's output of each exported model with PyTorch's.
usage: compare.py GEN_DIR OUT_DIR [ATOL RTOL [REL_L2]]  (OUT_DIR/NAME/y.npy: `kiln run --output-dir`)
The bound is elementwise |kiln - torch| <= atol + rtol * |torch|, by default atol 1e-5 and rtol
1e-3 (ONNX's default rtol): FP32, where kiln's results differ from PyTorch's by rounding alone.
FP16 plans (scripts/gpu-check.sh) pass a looser elementwise bound and REL_L2, a bound on
||kiln - torch|| / ||torch|| over the whole output (2e-3 there).
Prints one line per model; exits 1 when any is outside the bound."""

import os
import sys

import numpy as np

def main():
    gen, out = sys.argv[1], sys.argv[2]
    atol, rtol = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) > 4 else (1e-5, 1e-3)
    rel_l2_bound = float(sys.argv[5]) if len(sys.argv) > 5 else None
    names = open(os.path.join(gen, "models.txt")).read().split()
    failed = []
    for name in names:
        want = np.load(os.path.join(gen, name + ".expected.npy"))
        path = os.path.join(out, name, "y.npy")
        if not os.path.exists(path):
            print(f"FAIL {name}: no output ({path})")
            failed.append(name)
            continue
        got = np.load(path)
        if got.shape != want.shape:
            print(f"FAIL {name}: shape {got.shape}, PyTorch's is {want.shape}")
            failed.append(name)
            continue
        diff = np.abs(got.astype(np.float64) - want)
        excess = diff - (atol + rtol * np.abs(want))
        rel_l2 = float(np.linalg.norm(diff) / max(np.linalg.norm(want), 1e-30))
        ok = bool(np.all(excess <= 0)) and bool(np.all(np.isfinite(got)))
        if rel_l2_bound is not None:
            ok = ok and rel_l2 <= rel_l2_bound
        print(f"{'pass' if ok else 'FAIL'} {name}: shape {list(want.shape)}, max |diff| "
              f"{diff.max():.3g}, max |torch| {np.abs(want).max():.3g}, relative L2 {rel_l2:.3g}")
        if not ok:
            failed.append(name)
    if failed:
        sys.exit(f"torch_exports: {len(failed)} of {len(names)} outside the bound: {failed}")
    l2 = f", relative L2 <= {rel_l2_bound:g}" if rel_l2_bound is not None else ""
    print(f"torch_exports: all {len(names)} models match PyTorch (atol {atol:g}, rtol {rtol:g}{l2})")


if __name__ == "__main__":
    main()
