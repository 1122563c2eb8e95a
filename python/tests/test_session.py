"""kiln.InferenceSession, onnxruntime's shape: results equal to the C++ API's, NumPy and DLPack
round trips for every data type, errors, threads, the GIL."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import kiln
from conftest import (ALL_TYPES, DEMO, HAVE_ONNX, conv_model, mlp_model, needs_onnx,
                      passthrough_network, random_of, run_cli, unknown_op_model)


def test_help_says_what_it_does():
    doc = kiln.InferenceSession.__doc__
    for words in ("ONNX model or a kiln plan", "get_inputs()", "run(output_names",
                  "__dlpack__", "stream=", "kiln.Error"):
        assert words in doc
    assert "NumPy" in kiln.InferenceSession.run.__doc__


@needs_onnx
def test_inputs_and_outputs_are_described_as_onnxruntime_does(mlp):
    sess = kiln.InferenceSession(mlp)
    (x,) = sess.get_inputs()
    assert (x.name, x.shape, x.type, x.dtype) == ("x", [2, 16], "tensor(float)", np.float32)
    assert [(o.name, o.shape) for o in sess.get_outputs()] == [("y", [2, 10]), ("logits", [2, 10])]
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.device == "cpu"


@needs_onnx
def test_results_equal_the_cpp_api_bit_for_bit(tmp_path, mlp, convnet, kiln_cli, r):
    # Each build times its tactics and may choose differently, so both sides run one plan:
    # built by Python and run by the C++ command line, and built by the command line and run by
    # Python.
    for model, shape in ((mlp, (2, 16)), (convnet, (1, 3, 16, 16))):
        x = r.standard_normal(shape).astype(np.float32)
        np.save(tmp_path / "x.npy", x)
        py_plan, cli_plan = tmp_path / "py.plan", tmp_path / "cli.plan"
        sess = kiln.InferenceSession(model)
        sess.save(py_plan)
        run_cli(kiln_cli, "build", "--onnx", model, "--save", str(cli_plan))
        for plan in (py_plan, cli_plan):
            out = tmp_path / f"out_{plan.stem}"
            run_cli(kiln_cli, "run", str(plan), "--input", f"x={tmp_path / 'x.npy'}",
                    "--output-dir", str(out))
            sess = kiln.InferenceSession(plan)
            got = sess.run(None, {"x": x})
            for arg, value in zip(sess.get_outputs(), got):
                want = np.load(out / f"{arg.name}.npy")
                assert value.dtype == want.dtype and value.shape == want.shape
                np.testing.assert_array_equal(value, want)


@needs_onnx
def test_demo_detector_with_its_plugin_equals_the_cpp_api(tmp_path, kiln_cli, r):
    sess = kiln.InferenceSession(DEMO, plugins=[kiln.BUILTIN_PLUGINS])
    feed = {}
    for a in sess.get_inputs():
        if a.dtype == np.int32:
            feed[a.name] = r.integers(0, 1, a.shape).astype(np.int32)
        elif a.name == "boxes":
            lo = r.uniform(0, 0.5, (a.shape[0], 2))
            feed[a.name] = np.concatenate([lo, lo + 0.4], axis=1).astype(np.float32)
        else:
            feed[a.name] = r.standard_normal(a.shape).astype(np.float32)
        np.save(tmp_path / f"{a.name}.npy", feed[a.name])
    args = []
    for n in feed:
        args += ["--input", f"{n}={tmp_path / (n + '.npy')}"]
    sess.save(tmp_path / "demo.plan")  # the command line registers kiln's plugins itself
    run_cli(kiln_cli, "run", str(tmp_path / "demo.plan"), *args, "--output-dir",
            str(tmp_path / "out"))
    (scores,) = sess.run(["class_scores"], feed)
    np.testing.assert_array_equal(scores, np.load(tmp_path / "out" / "class_scores.npy"))
    np.testing.assert_allclose(scores.sum(axis=1), 1, rtol=1e-5)


@needs_onnx
def test_results_agree_with_onnxruntime(mlp, convnet, r):
    ort = pytest.importorskip("onnxruntime")
    for model, shape in ((mlp, (2, 16)), (convnet, (1, 3, 16, 16))):
        x = r.standard_normal(shape).astype(np.float32)
        want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})
        got = kiln.InferenceSession(model).run(None, {"x": x})
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@needs_onnx
def test_a_saved_plan_loads_without_building_and_gives_the_same_results(tmp_path, mlp, r):
    sess = kiln.InferenceSession(mlp)
    sess.save(tmp_path / "mlp.plan")
    again = kiln.InferenceSession(tmp_path / "mlp.plan")
    from_bytes = kiln.InferenceSession(sess.plan)
    x = r.standard_normal((2, 16)).astype(np.float32)
    want = sess.run(["y"], {"x": x})[0]
    np.testing.assert_array_equal(again.run(["y"], {"x": x})[0], want)
    np.testing.assert_array_equal(from_bytes.run(["y"], {"x": x})[0], want)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=kiln.data_type_name)
def test_numpy_round_trip_for_every_type(dtype, r):
    sess = kiln.InferenceSession(passthrough_network(dtype))
    x = random_of(dtype, (2, 3), r)
    (y,) = sess.run(None, {"x": x})
    assert isinstance(y, np.ndarray) and y.dtype == x.dtype and y.shape == (4, 3)
    np.testing.assert_array_equal(y.view(np.uint8), np.concatenate([x, x]).view(np.uint8))


class DLPackOnly:
    """An array that offers only the DLPack protocol (as a torch or JAX CPU tensor does)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.mark.parametrize("dtype", [t for t in ALL_TYPES if t != kiln.DataType.BF16],
                         ids=kiln.data_type_name)
def test_dlpack_round_trip_for_every_type_without_a_copy(dtype, r):
    sess = kiln.InferenceSession(passthrough_network(dtype))
    x = random_of(dtype, (2, 3), r)
    (y,) = sess.run(None, {"x": DLPackOnly(x)})
    assert isinstance(y, kiln.Tensor)
    assert (y.shape, y.dtype, y.device) == ((4, 3), dtype, "cpu")
    assert y.__dlpack_device__() == (1, 0)
    view = np.from_dlpack(y)
    assert view.ctypes.data == y.data_ptr  # the same memory, no copy
    np.testing.assert_array_equal(view, np.concatenate([x, x]))
    np.testing.assert_array_equal(y.numpy(), view)
    np.testing.assert_array_equal(np.asarray(y), view)
    # The tensor's memory outlives the tensor object while a view holds it.
    del y
    np.testing.assert_array_equal(view, np.concatenate([x, x]))


def test_bf16_round_trip_through_dlpack(r):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    sess = kiln.InferenceSession(passthrough_network(kiln.DataType.BF16))
    x = random_of(kiln.DataType.BF16, (2, 3), r)
    # NumPy cannot import DLPack bf16, so the input goes in as a tensor kiln made.
    (y,) = sess.run(None, {"x": x}, output_type="tensor")
    assert y.dtype == kiln.DataType.BF16
    (z,) = kiln.InferenceSession(passthrough_network(kiln.DataType.BF16, (4, 3))).run(
        None, {"x": y})
    assert isinstance(z, kiln.Tensor)
    want = np.concatenate([x, x, x, x])
    np.testing.assert_array_equal(z.numpy().view(np.uint16), want.view(np.uint16))
    assert z.numpy().dtype == ml_dtypes.bfloat16


def test_non_contiguous_numpy_input_is_made_contiguous(r):
    sess = kiln.InferenceSession(passthrough_network(kiln.DataType.FLOAT))
    x = r.standard_normal((3, 2)).astype(np.float32).T
    assert not x.flags.c_contiguous
    (y,) = sess.run(None, {"x": x})
    np.testing.assert_array_equal(y, np.concatenate([x, x]))


def test_non_contiguous_dlpack_input_is_refused(r):
    sess = kiln.InferenceSession(passthrough_network(kiln.DataType.FLOAT))
    x = r.standard_normal((3, 2)).astype(np.float32).T
    with pytest.raises(kiln.InvalidArgumentError, match="not contiguous"):
        sess.run(None, {"x": DLPackOnly(x)})


class FakeCudaArray:
    """Something that only has __cuda_array_interface__ (a Numba device array, say)."""

    def __init__(self, shape, typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (1 << 40, False),
                                         "version": 3, "strides": strides}


def test_cuda_array_interface_is_read_and_checked():
    from kiln._interop import CudaArrayView
    v = CudaArrayView(FakeCudaArray((2, 3)))
    assert (v.ptr, v.shape, v.dtype) == (1 << 40, (2, 3), kiln.DataType.FLOAT)
    with pytest.raises(kiln.InvalidArgumentError, match="not contiguous"):
        CudaArrayView(FakeCudaArray((2, 3), strides=(4, 8)))
    with pytest.raises(kiln.InvalidArgumentError, match="no data type"):
        CudaArrayView(FakeCudaArray((2, 3), typestr="<c8"))


def test_a_cuda_array_on_a_cpu_session_is_refused():
    sess = kiln.InferenceSession(passthrough_network(kiln.DataType.FLOAT))
    with pytest.raises(kiln.InvalidArgumentError, match="not an array|cuda"):
        sess.run(None, {"x": FakeCudaArray((2, 3))})


# ---- errors -----------------------------------------------------------------------------------


def test_wrong_shape_dtype_and_names_raise_kiln_errors_with_the_message(r):
    sess = kiln.InferenceSession(passthrough_network(kiln.DataType.FLOAT))
    x = r.standard_normal((2, 3)).astype(np.float32)
    with pytest.raises(kiln.InvalidArgumentError) as e:
        sess.run(None, {"x": x.reshape(3, 2)})
    assert str(e.value) == "tensor 'x' has shape (3, 2) but the engine expects (2, 3)"
    assert isinstance(e.value, kiln.Error) and isinstance(e.value, ValueError)
    assert e.value.code == "invalid argument"
    with pytest.raises(kiln.InvalidArgumentError, match="tensor 'x' is float64 but the engine "
                       "expects fp32|tensor 'x' is fp.* but"):
        sess.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(kiln.InvalidArgumentError, match="is int32 but the engine expects fp32"):
        sess.run(None, {"x": x.astype(np.int32)})
    with pytest.raises(kiln.NotFoundError, match="no input 'z'"):
        sess.run(None, {"x": x, "z": x})
    with pytest.raises(kiln.NotFoundError, match="no output 'nope'"):
        sess.run(["nope"], {"x": x})
    with pytest.raises(kiln.InvalidArgumentError, match="missing input"):
        sess.run(None, {})
    with pytest.raises(kiln.InvalidArgumentError, match="not an array"):
        sess.run(None, {"x": object()})


def test_unknown_file_and_corrupt_plans_raise_kiln_errors(tmp_path):
    with pytest.raises(kiln.NotFoundError, match="no such file"):
        kiln.InferenceSession(tmp_path / "nothing.onnx")
    plan = bytearray(passthrough_network(kiln.DataType.FLOAT))
    bad = bytearray(plan)
    bad[len(bad) // 2] ^= 0x40
    with pytest.raises(kiln.CorruptDataError) as e:
        kiln.InferenceSession(bytes(bad))
    assert "checksum" in str(e.value)
    with pytest.raises(kiln.Error) as e:
        kiln.InferenceSession(bytes(plan[: len(plan) - 7]))
    assert "truncated" in str(e.value) or "checksum" in str(e.value), str(e.value)
    with pytest.raises(kiln.Error):
        kiln.Runtime().deserialize_engine(b"KILNPLAN")


@needs_onnx
def test_a_missing_plugin_raises_with_the_op_named(tmp_path):
    path = unknown_op_model(tmp_path / "missing.onnx")
    with pytest.raises(kiln.Error) as e:
        kiln.InferenceSession(path)
    assert "NoSuchPluginOp" in str(e.value) and "node 0" in str(e.value), str(e.value)
    with pytest.raises(kiln.IoError, match="no_such_library"):
        kiln.InferenceSession(path, plugins=[tmp_path / "no_such_library.so"])


@needs_onnx
def test_a_plan_whose_plugin_is_not_registered_is_refused_on_load(tmp_path):
    sess = kiln.InferenceSession(DEMO, plugins=[kiln.BUILTIN_PLUGINS])
    sess.save(tmp_path / "demo.plan")
    info = kiln.inspect_plan(sess.plan)  # needs no plugin: the record names its library
    assert "CropAndResize" in info and "libkiln_plugins.so" in info
    # A fresh process, where nothing registered CropAndResize, refuses the plan with the reason.
    code = ("import sys, kiln\n"
            "try:\n"
            f"    kiln.InferenceSession({str(tmp_path / 'demo.plan')!r})\n"
            "except kiln.Error as e:\n"
            "    print(type(e).__name__, '|', e)\n"
            "    sys.exit(0)\n"
            "sys.exit('loaded')\n")
    p = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    kind, message = p.stdout.strip().split(" | ", 1)
    assert kind == "NotFoundError", p.stdout
    assert "CropAndResize" in message and "libkiln_plugins.so" in message, message


# ---- threads and the GIL -------------------------------------------------------------------------


@needs_onnx
def test_several_sessions_on_several_threads_at_once(tmp_path, mlp, convnet, r):
    sessions = [kiln.InferenceSession(mlp), kiln.InferenceSession(convnet)]
    shared = sessions[0]
    xs = [r.standard_normal((2, 16)).astype(np.float32),
          r.standard_normal((1, 3, 16, 16)).astype(np.float32)]
    want = [s.run(None, {"x": x}) for s, x in zip(sessions, xs)]
    errors, barrier = [], threading.Barrier(6)

    def work(k):
        try:
            barrier.wait()
            s = sessions[k % 2] if k < 4 else shared  # two threads also share one session
            x = xs[k % 2] if k < 4 else xs[0]
            w = want[k % 2] if k < 4 else want[0]
            for _ in range(50):
                for g, e in zip(s.run(None, {"x": x}), w):
                    np.testing.assert_array_equal(g, e)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    # The shared session made one context per concurrent run, never more than its threads.
    assert 1 <= len(shared._free) <= 4  # four of the threads use it


def build_while_counting(path):
    """Builds `path` on a second thread while this one counts; (build seconds, ticks)."""
    ticks, done, result = 0, threading.Event(), {}

    def build():
        start = time.monotonic()
        result["sess"] = kiln.InferenceSession(path)
        result["seconds"] = time.monotonic() - start
        done.set()

    t = threading.Thread(target=build)
    t.start()
    while not done.is_set():
        ticks += 1  # pure Python work: runs only while the build does not hold the GIL
        time.sleep(0)
    t.join()
    return result["seconds"], ticks


@needs_onnx
def test_the_gil_is_released_during_a_long_build(tmp_path, r):
    # A network whose CPU build takes a second or so (doubled until it takes at least 0.5 s: the
    # builder times a lone candidate once, so a layer builds in milliseconds).
    for layers in (12, 24, 48, 96, 192, 384, 768):
        path = conv_model(tmp_path / f"big{layers}.onnx", r, layers=layers, channels=32, size=48)
        seconds, ticks = build_while_counting(path)
        print(f"{layers} layers: build took {seconds:.2f} s; the main thread ticked {ticks} times")
        if seconds >= 0.5:
            break
    assert seconds >= 0.5, "the network is too small to show anything"
    # A build that held the GIL would let the main thread run only at the GIL's 5 ms switch
    # interval, and never while inside C++: count thousands of ticks per second instead.
    assert ticks > 1000 * seconds, ticks


@needs_onnx
def test_build_progress_is_reported_and_can_cancel(tmp_path, r, capsys):
    path = conv_model(tmp_path / "c.onnx", r, layers=3)
    seen = []
    kiln.InferenceSession(path, progress=lambda *a: seen.append(a))
    phases = [p for p, *_ in seen]
    assert phases[0] == "layers" and phases[-1] == "plan" and "tactics" in phases
    assert all(1 <= d <= t for _, d, t, _ in seen)
    with pytest.raises(kiln.CancelledError, match="cancelled by the progress callback"):
        kiln.InferenceSession(path, progress=lambda phase, *a: phase != "tactics")

    class Stop(Exception):
        pass

    def boom(*a):
        raise Stop("from the callback")

    with pytest.raises(Stop):  # an exception in the callback stops the build and comes out
        kiln.InferenceSession(path, progress=boom)
    kiln.InferenceSession(path, progress=True)
    assert "[kiln] plan" in capsys.readouterr().err


@needs_onnx
def test_a_dynamic_batch_is_built_for_the_shapes_given_and_agrees_with_onnxruntime(tmp_path, r):
    # The batch axis is the symbol 'batch', as torch.onnx.export(dynamic_axes=...) writes it.
    ort = pytest.importorskip("onnxruntime")
    model = mlp_model(tmp_path / "dynamic.onnx", r, batch="batch")
    with pytest.raises(kiln.UnsupportedError, match=r"symbolic or unknown dim 0 \('batch'\)"):
        kiln.InferenceSession(model)
    reference = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    for batch in (1, 5):
        x = r.standard_normal((batch, 16)).astype(np.float32)
        session = kiln.InferenceSession(model, input_shapes={"x": (batch, 16)})
        assert session.get_inputs()[0].shape == [batch, 16]
        for got, want in zip(session.run(None, {"x": x}), reference.run(None, {"x": x})):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(kiln.InvalidArgumentError, match="is fixed at 16 in the model"):
        kiln.InferenceSession(model, input_shapes={"x": (2, 17)})


@needs_onnx
def test_a_profile_session_runs_every_batch_in_its_ranges(tmp_path, r):
    # One build for batches 1..8 and 9..32 (two profiles); each run picks the profile its shape
    # fits, and agrees with a session built statically for that batch.
    model = mlp_model(tmp_path / "dynamic.onnx", r, batch="batch")
    profiles = [{"x": ((1, 16), (4, 16), (8, 16))}, {"x": ((9, 16), (16, 16), (32, 16))}]
    session = kiln.InferenceSession(model, profiles=profiles)
    assert session.get_inputs()[0].shape == [-1, 16]
    assert session.get_outputs()[0].shape == [-1, 10]
    for batch in (5, 20, 1, 32, 8):
        x = r.standard_normal((batch, 16)).astype(np.float32)
        static = kiln.InferenceSession(model, input_shapes={"x": (batch, 16)})
        want = static.run(None, {"x": x})
        got = session.run(None, {"x": x})
        assert [g.shape for g in got] == [(batch, 10), (batch, 10)]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        # One output asked for (the other goes to scratch memory of this batch), as a kiln.Tensor.
        (y,) = session.run(["y"], {"x": x}, output_type="tensor")
        np.testing.assert_allclose(y.numpy(), want[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(kiln.InvalidArgumentError, match=r"axis 0 is 40, outside profile 0's range"):
        session.run(None, {"x": np.zeros((40, 16), np.float32)})
    with pytest.raises(kiln.InvalidArgumentError, match="axis 1"):
        session.run(None, {"x": np.zeros((4, 17), np.float32)})


@needs_onnx
def test_profiles_through_the_tensorrt_style_api(tmp_path, r):
    model = mlp_model(tmp_path / "dynamic.onnx", r, batch="batch")
    profiles = [{"x": ((1, 16), (4, 16), (8, 16))}, {"x": ((9, 16), (16, 16), (32, 16))}]
    builder = kiln.Builder()
    network = builder.create_network()
    parser = kiln.OnnxParser(network, profiles=profiles)
    assert parser.parse_from_file(model), parser.get_error(0)
    config = builder.create_builder_config()
    config.profiles = profiles
    assert config.profiles == [{"x": [[1, 16], [4, 16], [8, 16]]},
                               {"x": [[9, 16], [16, 16], [32, 16]]}]
    engine = kiln.Runtime().deserialize_engine(builder.build_serialized_network(network, config))
    assert engine.num_optimization_profiles == 2
    assert engine.get_tensor_shape("x") == (-1, 16)
    assert engine.get_tensor_profile_shape("x", 1) == [(9, 16), (16, 16), (32, 16)]
    with pytest.raises(kiln.InvalidArgumentError, match="profile 2 does not exist"):
        engine.get_tensor_profile_shape("x", 2)
    ctx = engine.create_execution_context()
    assert ctx.infer_shapes() == ["x"]
    assert ctx.get_tensor_shape("y") == (-1, 10)
    with pytest.raises(kiln.InvalidArgumentError, match="call set_input_shape first"):
        ctx.set_tensor_address("y", np.zeros((12, 10), np.float32))
    with pytest.raises(kiln.InvalidArgumentError, match="profile 1 accepts it"):
        ctx.set_input_shape("x", [12, 16])
    ctx.set_optimization_profile(1)
    assert ctx.active_optimization_profile == 1
    ctx.set_input_shape("x", [12, 16])
    assert ctx.infer_shapes() == []
    assert ctx.get_tensor_shape("y") == (12, 10)
    x = r.standard_normal((12, 16)).astype(np.float32)
    y, logits = np.zeros((12, 10), np.float32), np.zeros((12, 10), np.float32)
    with pytest.raises(kiln.InvalidArgumentError, match=r"has shape \(8, 16\)"):
        ctx.set_tensor_address("x", x[:8])
    ctx.set_tensor_address("x", x)
    ctx.set_tensor_address("y", y)
    ctx.set_tensor_address("logits", logits)
    ctx.execute_async(0)
    want = kiln.InferenceSession(model, input_shapes={"x": (12, 16)}).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    # CUDA graphs are a CUDA engine's; a CPU context says so and keeps running layer by layer.
    assert not ctx.cuda_graphs_on()
    with pytest.raises(kiln.UnsupportedError, match="need a CUDA engine"):
        ctx.set_cuda_graphs(True)
    assert ctx.cuda_graph_stats() == {"captured": 0, "replayed": 0, "direct": 0, "failed": 0,
                                      "held": 0}


@needs_onnx
def test_shape_value_inputs_are_built_for_their_values(tmp_path, r):
    """A Reshape whose shape is a graph input (what onnxruntime runs with the values fed): built
    for shape_values, the input stays one, read on the host, and other values are refused."""
    from conftest import TensorProto, helper, save
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])])
    model = save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
                 tmp_path / "reshape.onnx")
    with pytest.raises(kiln.Error, match="shape"):
        kiln.InferenceSession(model)  # without values there is nothing to build for
    sess = kiln.InferenceSession(model, shape_values={"shape": [4, -1]})
    assert sess.engine.is_shape_value_input("shape")
    assert not sess.engine.is_shape_value_input("x")
    assert sess.engine.get_shape_values("shape") == [4, -1]
    x = r.standard_normal((2, 3, 4)).astype(np.float32)
    (y,) = sess.run(None, {"x": x, "shape": np.array([4, -1], np.int64)})
    np.testing.assert_array_equal(y, x.reshape(4, 6))
    with pytest.raises(kiln.InvalidArgumentError, match="holds 6 at index 0"):
        sess.run(None, {"x": x, "shape": np.array([6, -1], np.int64)})


def test_cuda_graphs_need_a_cuda_session(mlp):
    with pytest.raises(kiln.UnsupportedError, match="cuda_graphs=True needs a CUDA session"):
        kiln.InferenceSession(mlp, cuda_graphs=True)
