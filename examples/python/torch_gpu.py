#!/usr/bin/env python3
"""PyTorch tensors in and out of kiln on the GPU, without a copy, on your own stream.

usage: python examples/python/torch_gpu.py [MODEL.onnx]
Without MODEL, a small network is built with kiln's network API (so this also runs where kiln
was built without the ONNX parser).
"""

import sys

import numpy as np
import torch

import kiln


def small_network(target):
    r = np.random.default_rng(0)
    builder = kiln.Builder()
    net = builder.create_network()
    x = net.add_input("x", kiln.float32, [8, 64])
    w = net.add_constant(r.standard_normal((64, 32)).astype(np.float32)).get_output(0)
    mm = net.add_layer("MatrixMultiply", [x, w])
    act = net.add_layer("Activation", [mm.get_output(0)], type=2)  # sigmoid
    act.get_output(0).name = "y"
    net.mark_output(act.get_output(0))
    config = builder.create_builder_config()
    config.target = target
    return builder.build_serialized_network(net, config)


def main():
    if not (kiln.has_cuda() and torch.cuda.is_available()):
        sys.exit(f"no CUDA GPU for kiln: {kiln.device_count('cuda')[1]}")
    model = sys.argv[1] if len(sys.argv) > 1 else None
    gpu = kiln.InferenceSession(model or small_network("cuda"), device="cuda")
    cpu = kiln.InferenceSession(model or small_network("cpu"))
    name = gpu.get_inputs()[0].name
    shape = gpu.get_inputs()[0].shape

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x = torch.randn(*shape, device="cuda")
        outputs = gpu.run(None, {name: x}, stream=stream)  # enqueued on `stream`, no wait
        y = torch.from_dlpack(outputs[0])                   # kiln's memory, no copy
        z = y.sum()                                         # torch work after kiln's, same stream
    stream.synchronize()
    print(f"input  {name} at {x.data_ptr():#x} (bound as is)")
    print(f"output {gpu.get_outputs()[0].name} at {y.data_ptr():#x} == kiln tensor "
          f"{outputs[0].data_ptr:#x}: {y.data_ptr() == outputs[0].data_ptr}")
    want = cpu.run(None, {name: x.cpu().numpy()})[0]
    print(f"max |gpu - cpu| = {np.abs(y.cpu().numpy() - want).max():.3g}; sum {z.item():.4f}")


if __name__ == "__main__":
    main()
