#!/usr/bin/env python3
"""Run kiln's demo detector (models/demo_detector.onnx), whose region head is a CropAndResize
node that kiln's ONNX parser resolves to kiln's CropAndResize plugin, and show the plugin's
lifecycle as kiln traced it.

usage: python examples/python/demo_detector.py [--device cpu|cuda] [--trace trace.jsonl]
"""

import argparse
import collections
import os

import numpy as np

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "models", "demo_detector.onnx")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--trace", help="keep the lifecycle trace in this file")
    args = ap.parse_args()

    with kiln.trace(args.trace) as trace:
        sess = kiln.InferenceSession(MODEL, device=args.device, plugins=[kiln.BUILTIN_PLUGINS])
        for a in sess.get_inputs():
            print(f"input  {a.name:12} {a.type:16} {a.shape}")
        r = np.random.default_rng(0)
        feed = {
            "image": r.standard_normal((1, 3, 64, 64)).astype(np.float32),
            # Six boxes (y1, x1, y2, x2), normalised, all in image 0.
            "boxes": np.array([[0.0, 0.0, 1.0, 1.0], [0.1, 0.1, 0.5, 0.5], [0.5, 0.5, 0.9, 0.9],
                               [0.2, 0.6, 0.4, 0.95], [0.7, 0.1, 0.95, 0.3], [0.9, 0.9, 0.1, 0.1]],
                              np.float32),
            "box_indices": np.zeros(6, np.int32),
        }
        feed = {k: v for k, v in feed.items() if k in {a.name for a in sess.get_inputs()}}
        (scores,) = sess.run(["class_scores"], feed)
        del sess  # teardown is traced too
    print("class scores per box:")
    for b, row in enumerate(scores):
        print(f"  box {b}: " + " ".join(f"{p:.3f}" for p in row) + f"  -> class {row.argmax()}")
    calls = collections.Counter((e["phase"], e["call"]) for e in trace.events)
    print(f"CropAndResize lifecycle: {len(trace.events)} calls")
    for (phase, call), n in sorted(calls.items()):
        print(f"  {phase:12} {call:20} x{n}")


if __name__ == "__main__":
    main()
