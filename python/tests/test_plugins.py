"""Plugins from Python: loading a library, the registry's listing, the lifecycle trace and the
conformance harness."""

import numpy as np
import pytest

import kiln
from conftest import DEMO, needs_onnx


def test_loading_kilns_plugin_library_registers_crop_and_resize():
    path = kiln.init_plugins()
    kiln.load_plugin_library(path)  # again: harmless
    (crop,) = [p for p in kiln.registered_plugins() if p["name"] == "CropAndResize"]
    assert crop["version"] == "1" and crop["namespace"] == ""
    assert crop["library"] == "libkiln_plugins.so" and len(crop["library_hash"]) >= 16
    assert crop["fields"]["crop_height"] and "method" in crop["fields"]


def test_a_missing_library_raises(tmp_path):
    with pytest.raises(kiln.IoError, match="libnothing.so"):
        kiln.load_plugin_library(tmp_path / "libnothing.so")
    bad = tmp_path / "libbad.so"
    bad.write_bytes(b"not an ELF file")
    with pytest.raises(kiln.Error):
        kiln.load_plugin_library(bad)


def crop_network(builder):
    net = builder.create_network()
    fm = net.add_input("features", kiln.float32, [1, 4, 8, 8])
    boxes = net.add_input("boxes", kiln.float32, [3, 4])
    idx = net.add_input("box_indices", kiln.int32, [3])
    layer = net.add_plugin([fm, boxes, idx], "CropAndResize",
                           {"crop_height": 2, "crop_width": 3, "method": "bilinear"})
    layer.name = "crop"
    layer.get_output(0).name = "crops"
    net.mark_output(layer.get_output(0))
    return net


def test_a_plugin_layer_by_hand_is_traced_through_its_whole_lifecycle(tmp_path):
    kiln.init_plugins()
    builder = kiln.Builder()
    # FP32 plugin tensors: the builder would otherwise pick FP16 or BF16 where it times faster,
    # and the corner checks below are exact to 1e-6.
    config = kiln.BuilderConfig()
    config.allow_half = False
    with kiln.trace(tmp_path / "trace.jsonl") as t:
        plan = builder.build_serialized_network(crop_network(builder), config)
        sess = kiln.InferenceSession(plan)
        boxes = np.array([[0, 0, 1, 1], [0.2, 0.1, 0.8, 0.9], [1, 1, 0, 0]], np.float32)
        features = np.random.default_rng().standard_normal((1, 4, 8, 8)).astype(np.float32)
        (crops,) = sess.run(None, {"features": features, "boxes": boxes,
                                   "box_indices": np.zeros(3, np.int32)})
        del sess
    assert crops.shape == (3, 4, 2, 3)
    # Box 0 spans the whole image: its corners are the image's corners.
    np.testing.assert_allclose(crops[0, :, 0, 0], features[0, :, 0, 0], rtol=1e-6)
    np.testing.assert_allclose(crops[0, :, 1, 2], features[0, :, 7, 7], rtol=1e-6)
    calls = [e["call"] for e in t.events]
    for call in ("createPlugin", "clone", "configurePlugin", "serialize", "deserializePlugin",
                 "initialize", "attachToContext", "onShapeChange", "enqueue", "detachFromContext",
                 "terminate", "destroy"):
        assert call in calls, call
    assert {e["phase"] for e in t.events} >= {"build", "deserialize", "context", "infer",
                                             "teardown"}
    assert all(e["plugin"] == "CropAndResize" for e in t.events)
    # Every object made is destroyed exactly once (guarantee 1).
    made = {e["result"] for e in t.events if "result" in e and e["result"] is not None}
    destroyed = [e["object"] for e in t.events if e["call"] == "destroy"]
    assert sorted(destroyed) == sorted(made)


def test_plugin_fields_are_checked_against_the_creator():
    kiln.init_plugins()
    builder = kiln.Builder()
    net = builder.create_network()
    x = net.add_input("x", kiln.float32, [1, 1, 4, 4])
    with pytest.raises(kiln.InvalidArgumentError, match="colour"):
        net.add_plugin([x], "CropAndResize", {"colour": 1})
    with pytest.raises(kiln.NotFoundError, match="NoSuchPlugin"):
        net.add_plugin([x], "NoSuchPlugin")


def test_check_plugin_returns_the_harness_table_as_data():
    kiln.init_plugins()
    report = kiln.check_plugin(
        "CropAndResize", {"crop_height": 3, "crop_width": 3},
        [(1, 2, 6, 6), ((4, 4), "float32", 0, 1), ((4,), "int32", 0, 1)],
        devices=["cpu"], contexts=2, iterations=2, max_combinations=4, seed=7)
    assert report.all_passed, report.table
    assert report.passed > 5 and report.failed == 0 and report.seed == 7
    assert report.find("build", "cpu") and all(r["outcome"] == "pass" for r in report.find("build"))
    assert {"check", "device", "combination", "outcome", "detail"} <= set(report.rows[0])
    assert "plugin check:" in str(report)


def test_check_plugin_of_an_unknown_plugin_raises():
    with pytest.raises(kiln.NotFoundError, match="not registered"):
        kiln.check_plugin("NoSuchPlugin", {}, [(1, 2)])


@needs_onnx
def test_the_trace_shows_the_parse_phase_of_an_onnx_model():
    with kiln.trace() as t:
        kiln.InferenceSession(DEMO, plugins=[kiln.BUILTIN_PLUGINS])
    assert any(e["phase"] == "parse" and e["call"] == "createPlugin" for e in t.events)
