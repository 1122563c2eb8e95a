#!/usr/bin/env python3
"""Compare kiln with onnxruntime on an ONNX model: same inputs, outputs side by side, timings.

usage: python examples/python/compare_onnxruntime.py [MODEL.onnx] [--device cpu|cuda] [--fp16]
Without MODEL, a small convolutional network is made with the onnx package. Needs kiln
(`pip install .`), numpy, onnx and onnxruntime.
"""

import argparse
import tempfile
import time

import numpy as np
import onnxruntime as ort

import kiln


def small_convnet(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    r = np.random.default_rng(0)
    nodes, inits, prev, c = [], [], "x", 3
    for i, k in enumerate((16, 32, 32)):
        inits += [numpy_helper.from_array((r.standard_normal((k, c, 3, 3)) * 0.2).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(r.standard_normal(k).astype(np.float32) * 0.1, f"b{i}")]
        nodes += [helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1] * 4,
                                   kernel_shape=[3, 3], strides=[2, 2] if i else [1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        prev, c = f"r{i}", k
    nodes.append(helper.make_node("GlobalAveragePool", [prev], ["pooled"]))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["features"]))
    inits.append(numpy_helper.from_array(r.standard_normal((32, 10)).astype(np.float32), "fc"))
    nodes.append(helper.make_node("MatMul", ["features", "fc"], ["logits"]))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], axis=-1))
    g = helper.make_graph(nodes, "small_convnet",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3, 32, 32])],
                          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [4, 10])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def random_feed(args):
    r = np.random.default_rng(1)
    feed = {}
    for a in args:
        if a.dtype is not None and np.issubdtype(a.dtype, np.integer):
            feed[a.name] = np.zeros(a.shape, a.dtype)
        else:
            feed[a.name] = r.standard_normal(a.shape).astype(a.dtype)
    return feed


def timed(fn, runs=50):
    fn()
    t = time.perf_counter()
    for _ in range(runs):
        fn()
    return (time.perf_counter() - t) / runs * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("model", nargs="?")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--fp16", action="store_true")
    args = ap.parse_args()
    model = args.model or small_convnet(tempfile.mktemp(suffix=".onnx"))

    sess = kiln.InferenceSession(model, device=args.device, fp16=args.fp16, progress=True)
    providers = ["CUDAExecutionProvider"] if args.device.startswith("cuda") else []
    ref = ort.InferenceSession(model, providers=providers + ["CPUExecutionProvider"])
    feed = random_feed(sess.get_inputs())

    got = sess.run(None, feed)
    want = ref.run(None, feed)
    print(f"{model}: kiln on {sess.device}, onnxruntime on {ref.get_providers()[0]}")
    for a, g, w in zip(sess.get_outputs(), got, want):
        diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
        rel = diff.max() / max(np.abs(w).max(), 1e-30)
        print(f"  {a.name} {a.type} {a.shape}: max |kiln - ort| {diff.max():.3g} "
              f"(relative to max |ort| {rel:.3g})")
    print(f"  time per run: kiln {timed(lambda: sess.run(None, feed)):.3f} ms, "
          f"onnxruntime {timed(lambda: ref.run(None, feed)):.3f} ms")


if __name__ == "__main__":
    main()
