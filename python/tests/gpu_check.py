#!/usr/bin/env python3
"""kiln's Python package on a CUDA GPU with PyTorch: torch tensors in and out of a CUDA session
without a host copy (checked by pointer), on a user's stream, matching the CPU result.

Run by scripts/gpu-check.sh (which pip-installs the package first), or by hand:
    python3 python/tests/gpu_check.py            # prints one line per check, exit 1 on a failure
test_gpu.py runs the same checks under pytest (skipped without a GPU or torch).

The networks are built with kiln's network API (the GPU machine has no ONNX parser): a small
convolutional net in FP32, and one pass-through network per data type.
"""

import sys
import time
import traceback

import numpy as np

import kiln


def conv_net(target, seed=1234, fp16=False):
    """x [2, 3, 16, 16] -> Conv 3x3 (8) -> ReLU -> Conv 3x3 stride 2 (4) -> y [2, 4, 8, 8]."""
    r = np.random.default_rng(seed)
    builder = kiln.Builder()
    net = builder.create_network()
    x = net.add_input("x", kiln.float32, [2, 3, 16, 16])
    w0 = net.add_constant((r.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)).get_output(0)
    b0 = net.add_constant(r.standard_normal(8).astype(np.float32)).get_output(0)
    c0 = net.add_layer("Convolution", [x, w0, b0], out_channels=8, kernel_h=3, kernel_w=3,
                       pad_top=1, pad_left=1, pad_bottom=1, pad_right=1)
    a0 = net.add_layer("Activation", [c0.get_output(0)], type=0)
    w1 = net.add_constant((r.standard_normal((4, 8, 3, 3)) * 0.3).astype(np.float32)).get_output(0)
    c1 = net.add_layer("Convolution", [a0.get_output(0), w1], out_channels=4, kernel_h=3,
                       kernel_w=3, stride_h=2, stride_w=2, pad_top=1, pad_left=1, pad_bottom=1,
                       pad_right=1)
    c1.get_output(0).name = "y"
    net.mark_output(c1.get_output(0))
    config = builder.create_builder_config()
    config.target = target
    config.fp16 = fp16
    return builder.build_serialized_network(net, config)


def passthrough(dtype, target):
    builder = kiln.Builder()
    net = builder.create_network()
    x = net.add_input("x", dtype, [2, 3])
    layer = net.add_layer("Concatenation", [x, x], axis=0)
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    config = builder.create_builder_config()
    config.target = target
    return builder.build_serialized_network(net, config)


def check_torch_in_and_out_on_a_user_stream():
    import torch
    gpu = kiln.InferenceSession(conv_net("cuda"), device="cuda")
    cpu = kiln.InferenceSession(conv_net("cpu"))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.randn(2, 3, 16, 16, device="cuda")
        (y,) = gpu.run(None, {"x": x}, stream=s)  # enqueued on s, no wait
        assert isinstance(y, kiln.Tensor) and y.device == "cuda:0", y
        assert y.stream == s.cuda_stream
        yt = torch.from_dlpack(y)  # on s: no synchronisation needed
        # No host copy: the session bound x's own memory and torch sees kiln's output memory.
        slot = gpu._free[-1]
        assert slot.context.get_tensor_address("x") == x.data_ptr(), "input was copied"
        assert yt.data_ptr() == y.data_ptr, "output was copied"
        assert yt.device.type == "cuda" and yt.shape == (2, 4, 8, 8)
        z = yt * 2  # more torch work on s, after kiln's
    s.synchronize()
    (want,) = cpu.run(None, {"x": x.cpu().numpy()})
    np.testing.assert_allclose(yt.cpu().numpy(), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(z.cpu().numpy(), 2 * want, rtol=1e-4, atol=1e-4)
    return f"pointers equal (in {x.data_ptr():#x}, out {y.data_ptr:#x}), max |diff| " \
           f"{np.abs(yt.cpu().numpy() - want).max():.2e}"


def check_default_stream_and_numpy():
    import torch
    gpu = kiln.InferenceSession(conv_net("cuda"), device="cuda")
    cpu = kiln.InferenceSession(conv_net("cpu"))
    x = torch.randn(2, 3, 16, 16, device="cuda")
    (y,) = gpu.run(None, {"x": x})  # kiln's own stream, waited for
    (want,) = cpu.run(None, {"x": x.cpu().numpy()})
    np.testing.assert_allclose(torch.from_dlpack(y).cpu().numpy(), want, rtol=1e-4, atol=1e-4)
    (yn,) = gpu.run(None, {"x": x.cpu().numpy()})  # NumPy in: NumPy out
    assert isinstance(yn, np.ndarray)
    np.testing.assert_allclose(yn, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-4, atol=1e-4)
    return "torch on the default stream and NumPy in/out agree with the CPU"


def check_tensorrt_shape_with_torch_buffers():
    import torch
    engine = kiln.Runtime().deserialize_engine(conv_net("cuda"))
    ctx = engine.create_execution_context()
    x = torch.randn(2, 3, 16, 16, device="cuda")
    y = torch.empty(2, 4, 8, 8, device="cuda")
    ctx.set_tensor_address("x", x)
    ctx.set_tensor_address("y", y.data_ptr())
    assert ctx.get_tensor_address("x") == x.data_ptr()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    ctx.execute_async(s)
    s.synchronize()
    (want,) = kiln.InferenceSession(conv_net("cpu")).run(None, {"x": x.cpu().numpy()})
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-4, atol=1e-4)
    return "set_tensor_address(torch) + execute_async(torch.cuda.Stream)"


def check_the_contexts_own_cuda_graphs():
    import torch
    engine = kiln.Runtime().deserialize_engine(conv_net("cuda"))
    ctx = engine.create_execution_context()
    ctx.set_cuda_graphs(True)
    x = torch.empty(2, 3, 16, 16, device="cuda")
    y = torch.empty(2, 4, 8, 8, device="cuda")
    ctx.set_tensor_address("x", x)
    ctx.set_tensor_address("y", y)
    s = torch.cuda.Stream()
    cpu = kiln.InferenceSession(conv_net("cpu"))
    for _ in range(4):  # layer by layer, captured, then replayed twice: fresh inputs each time
        x.copy_(torch.randn(2, 3, 16, 16))
        s.wait_stream(torch.cuda.current_stream())
        ctx.execute_async(s)
        s.synchronize()
        (want,) = cpu.run(None, {"x": x.cpu().numpy()})
        np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-4, atol=1e-4)
    stats = ctx.cuda_graph_stats()
    assert stats == {"captured": 1, "replayed": 3, "direct": 1, "failed": 0, "held": 1}, stats
    return f"set_cuda_graphs(True): {stats}"


def check_a_session_with_cuda_graphs():
    cpu = kiln.InferenceSession(conv_net("cpu"))
    r = np.random.default_rng(5)
    said = []
    # True, and None (the default: a plugin-free plan keeps graphs); False runs layer by layer.
    for graphs, replays in ((True, 3), (None, 3), (False, 0)):
        gpu = kiln.InferenceSession(conv_net("cuda"), device="cuda", cuda_graphs=graphs)
        for _ in range(4):  # NumPy runs: the session's own device buffers, so the graph replays
            x = r.standard_normal((2, 3, 16, 16)).astype(np.float32)
            (got,) = gpu.run(None, {"x": x})
            (want,) = cpu.run(None, {"x": x})
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        ctx = gpu._free[0].context
        stats = ctx.cuda_graph_stats()
        assert ctx.cuda_graphs_on() == (graphs is not False), (graphs, stats)
        assert stats["captured"] == min(replays, 1) and stats["replayed"] == replays, stats
        said.append(f"cuda_graphs={graphs}: {stats}")
    return "InferenceSession, NumPy in and out: " + "; ".join(said)


def check_every_type_round_trips_through_torch():
    import torch
    kinds = {kiln.float32: torch.float32, kiln.float16: torch.float16, kiln.bfloat16: torch.bfloat16,
             kiln.int8: torch.int8, kiln.int32: torch.int32, kiln.int64: torch.int64,
             kiln.bool_: torch.bool}
    for kt, tt in kinds.items():
        sess = kiln.InferenceSession(passthrough(kt, "cuda"), device="cuda")
        x = (torch.randn(2, 3, device="cuda") * 10).to(tt)
        (y,) = sess.run(None, {"x": x})
        yt = torch.from_dlpack(y)
        assert yt.dtype == tt and yt.data_ptr() == y.data_ptr
        assert torch.equal(yt, torch.cat([x, x])), kt
    return f"{len(kinds)} types"


def check_cross_stream_use_is_refused():
    import torch
    gpu = kiln.InferenceSession(conv_net("cuda"), device="cuda")
    s = torch.cuda.Stream()
    x = torch.randn(2, 3, 16, 16, device="cuda")
    (y,) = gpu.run(None, {"x": x}, stream=s)
    try:
        torch.from_dlpack(y)  # asked for on the default stream
    except kiln.UnsupportedError:
        s.synchronize()
        return "refused with kiln.UnsupportedError"
    raise AssertionError("a tensor produced on another stream was handed out unsynchronized")


def check_overhead():
    import torch
    gpu = kiln.InferenceSession(passthrough(kiln.float32, "cuda"), device="cuda")
    x = torch.randn(2, 3, device="cuda")
    s = torch.cuda.current_stream()
    for _ in range(100):
        gpu.run(None, {"x": x}, stream=s)
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        gpu.run(None, {"x": x}, stream=s)
    s.synchronize()
    return f"run() on a user stream, 1-layer net: {(time.perf_counter() - t) / n * 1e6:.1f} us/run"


CHECKS = [check_torch_in_and_out_on_a_user_stream, check_default_stream_and_numpy,
          check_tensorrt_shape_with_torch_buffers, check_the_contexts_own_cuda_graphs,
          check_a_session_with_cuda_graphs,
          check_every_type_round_trips_through_torch,
          check_cross_stream_use_is_refused, check_overhead]


def main() -> int:
    import torch
    if not kiln.has_cuda() or not torch.cuda.is_available():
        print(f"SKIP: no CUDA GPU for kiln ({kiln.device_count('cuda')[1]}) or torch")
        return 0
    print(f"kiln {kiln.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    failed = 0
    for check in CHECKS:
        try:
            detail = check()
            print(f"pass  {check.__name__[6:]}: {detail}")
        except Exception:  # noqa: BLE001 - reported
            failed += 1
            print(f"FAIL  {check.__name__[6:]}")
            traceback.print_exc()
    print(f"{len(CHECKS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
