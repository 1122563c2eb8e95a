#!/usr/bin/env bash
# `kiln bench --device cuda` on a small plan (the demo detector built for the GPU): plain
# enqueues, CUDA graph replays, two streams, and profiled runs with their JSON report and Chrome
# trace. Exits 77 (ctest's skip) with "no CUDA GPU: ..." where there is none.
# usage: bench_gpu_test.sh KILN_BINARY WORK_DIR [ONNX_MODEL]
set -uo pipefail
kiln=$1
work=$2
onnx_model=${3:-}
rm -rf "$work" && mkdir -p "$work"
py=${KILN_PYTHON:-python3}

# The GPU plan, or the reason there is none.
if ! "$kiln" demo --device cuda --out "$work/demo" >"$work/demo.log" 2>&1; then
  if grep -q "no CUDA device\|without the CUDA backend\|no usable GPU" "$work/demo.log"; then
    echo "no CUDA GPU: $(grep -m1 "kiln" "$work/demo.log")"
    exit 77
  fi
  echo "FAIL kiln demo --device cuda"; sed 's/^/     /' "$work/demo.log" | tail -20
  exit 1
fi
plan=$work/demo/demo.plan

failures=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@" >"$work/last.log" 2>&1; then echo "ok   $what"; else
    echo "FAIL $what"; sed 's/^/     /' "$work/last.log" | tail -20; failures=$((failures + 1)); fi
}
quick=(--duration 0.5 --iterations 50 --warmup-ms 50 --no-progress)

check "bench a CUDA plan" "$kiln" bench "$plan" "${quick[@]}" --json "$work/plain.json"
cp "$work/last.log" "$work/plain.log"
check "GPU compute beside host enqueue" grep -q "^  GPU compute  *[0-9]" "$work/plain.log"
check "the host enqueue row" grep -q "^  host enqueue  *[0-9]" "$work/plain.log"
check "CUDA events named as the clock" grep -q "CUDA events" "$work/plain.log"
check "a plan with a plugin runs layer by layer by default" grep -q "layer by layer" "$work/plain.log"
check "bench with CUDA graph replays" "$kiln" bench "$plan" "${quick[@]}" --cuda-graph \
  --json "$work/graph.json"
cp "$work/last.log" "$work/graph.log"
check "the graph run says so" grep -q "CUDA graph replays" "$work/graph.log"
check "bench with the engine's own CUDA graphs (the plugin inside them), 2 streams" "$kiln" bench \
  "$plan" "${quick[@]}" --engine-graphs --streams 2 --json "$work/engine_graphs.json"
cp "$work/last.log" "$work/engine_graphs.log"
check "the engine-graph run says so" grep -q "the engine's CUDA graphs" "$work/engine_graphs.log"
check "bench on 2 streams" "$kiln" bench "$plan" "${quick[@]}" --streams 2 --json "$work/streams.json"
check "bench profiled, with a Chrome trace" "$kiln" bench "$plan" "${quick[@]}" --profile \
  --json "$work/profile.json" --chrome-trace "$work/trace.json"
cp "$work/last.log" "$work/profile.log"
check "the per-layer table has the plugin" grep -q "Plugin  *CropAndResize" "$work/profile.log"
check "graph and profile: the profile runs without the graph" "$kiln" bench "$plan" "${quick[@]}" \
  --cuda-graph --profile --profile-runs 5
cp "$work/last.log" "$work/graph_profile.log"
check "... and says so" grep -q "without the CUDA graph" "$work/graph_profile.log"
if $py -c 'import json' 2>/dev/null; then
  check "reports parse and hold what ran" $py - "$work" <<'PY'
import json, sys
work = sys.argv[1]
for name, streams, graph in (("plain", 1, False), ("graph", 1, True), ("streams", 2, False),
                             ("profile", 1, False)):
    r = json.load(open(f"{work}/{name}.json"))
    assert r["device"].startswith("cuda:") and r["latency_clock"] == "cuda_events", r
    assert r["streams"] == streams and r["cuda_graph"] == graph, (name, r)
    assert r["timed"]["inferences"] >= 50 * streams, (name, r["timed"])
    l = r["latency_ms"]
    assert 0 < l["min"] <= l["median"] <= l["p99"] <= l["max"], (name, l)
    assert r["memory"]["weight_bytes"] > 0 and r["memory"]["context_bytes"] > 0, r["memory"]
layers = json.load(open(f"{work}/profile.json"))["profile"]["layers"]
assert layers and all(x["ms"]["mean"] > 0 for x in layers), layers
t = json.load(open(f"{work}/trace.json"))
events = [e for e in t["traceEvents"] if e["ph"] == "X"]
assert len(events) == 20 * (len(layers) + 1), len(events)
assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in events)
PY
fi
# A plugin-free plan: its contexts replay their own graphs by default; --layer-by-layer does not.
if $py -c 'import onnx' 2>/dev/null; then
  check "a plugin-free ONNX model" $py - "$work/conv.onnx" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
w = numpy_helper.from_array(np.random.default_rng(1).standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                       helper.make_node("Relu", ["c"], ["y"])], "conv",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 16, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 16, 16])], [w])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
  check "bench a plugin-free CUDA plan, default graphs" "$kiln" bench --onnx "$work/conv.onnx" \
    --device cuda "${quick[@]}" --json "$work/conv_default.json"
  cp "$work/last.log" "$work/conv_default.log"
  check "... says it replayed the engine's graphs" grep -q "the engine's CUDA graphs" \
    "$work/conv_default.log"
  check "bench it --layer-by-layer" "$kiln" bench --onnx "$work/conv.onnx" --device cuda \
    "${quick[@]}" --layer-by-layer --json "$work/conv_layers.json"
  cp "$work/last.log" "$work/conv_layers.log"
  check "... says so" grep -q "layer by layer" "$work/conv_layers.log"
  check "the reports say which" $py -c "
import json, sys
assert json.load(open('$work/conv_default.json'))['engine_graphs'] is True
assert json.load(open('$work/conv_layers.json'))['engine_graphs'] is False"
fi
if [ -n "$onnx_model" ]; then
  check "bench --onnx --device cuda --fp16" "$kiln" bench --onnx "$onnx_model" --device cuda --fp16 \
    "${quick[@]}" --streams 2 --cuda-graph
fi
[ $failures -eq 0 ] && echo "bench gpu: all checks passed" || {
  echo "bench gpu: $failures check(s) failed"; exit 1; }
