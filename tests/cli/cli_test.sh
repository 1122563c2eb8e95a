#!/usr/bin/env bash
# The kiln command line end to end: demo, run (several contexts, outputs to .npy, inputs from
# .npy), bench (report, JSON, Chrome trace), inspect (planned memory below naive), trace (render +
# check), and the exit status 1 with a message on each kind of error.
# usage: cli_test.sh KILN_BINARY WORK_DIR [ONNX_MODEL]   (ONNX checks run when a model is given)
set -uo pipefail
kiln=$1
work=$2
onnx_model=${3:-}
rm -rf "$work" && mkdir -p "$work"
failures=0
# Debian's python3 has python3-numpy (installed by scripts/install-deps.sh); another python3
# earlier on PATH may not.
py=${KILN_PYTHON:-python3}
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@" >"$work/last.log" 2>&1; then echo "ok   $what"; else
    echo "FAIL $what"; sed 's/^/     /' "$work/last.log" | tail -20; failures=$((failures + 1)); fi
}
refuse() {  # description, expected message fragment, then a command that must exit 1
  local what=$1 want=$2; shift 2
  "$@" >"$work/last.log" 2>&1
  local rc=$?
  if [ $rc -eq 1 ] && grep -q -- "$want" "$work/last.log"; then echo "ok   $what"; else
    echo "FAIL $what (exit $rc, wanted 1 and '$want')"; sed 's/^/     /' "$work/last.log" | tail -10
    failures=$((failures + 1)); fi
}

check "demo builds, reloads, runs two contexts, traces" "$kiln" demo --out "$work/demo"
cp "$work/last.log" "$work/demo.log"
check "demo trace says the guarantees hold" grep -q "guarantees 1-9 hold" "$work/demo.log"
check "demo wrote the plan and the trace" test -s "$work/demo/demo.plan" -a -s "$work/demo/trace.jsonl"
plan=$work/demo/demo.plan

check "run on 4 contexts, outputs to .npy" "$kiln" run "$plan" --contexts 4 --runs 3 --output-dir "$work/out"
check "run wrote class_scores.npy" test -s "$work/out/class_scores.npy"
if $py -c 'import numpy' 2>/dev/null; then
  check "inputs from .npy give the same scores twice" $py - "$kiln" "$plan" "$work" <<'PY'
import subprocess, sys, numpy as np
kiln, plan, work = sys.argv[1:]
rng = np.random.default_rng()
np.save(f"{work}/image.npy", rng.standard_normal((1, 3, 64, 64)).astype(np.float32))
np.save(f"{work}/boxes.npy", rng.uniform(0, 1, (6, 4)).astype(np.float32))
np.save(f"{work}/idx.npy", np.zeros(6, np.int32))
outs = []
for k in range(2):
    subprocess.run([kiln, "run", plan, "--input", f"image={work}/image.npy", "--input",
                    f"boxes={work}/boxes.npy", "--input", f"box_indices={work}/idx.npy",
                    "--output-dir", f"{work}/o{k}"], check=True)
    outs.append(np.load(f"{work}/o{k}/class_scores.npy"))
assert outs[0].shape == (6, 5), outs[0].shape
assert np.array_equal(outs[0], outs[1])
assert np.allclose(outs[0].sum(axis=1), 1, atol=1e-5)
PY
fi

check "inspect prints JSON" "$kiln" inspect "$plan"
cp "$work/last.log" "$work/inspect.json"
if $py -c 'import json' 2>/dev/null; then
  check "inspect: planned activation memory below naive; tactics and plugin recorded" $py - "$work/inspect.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
m = j["memory"]
assert m["planned_activation_bytes"] < m["naive_activation_bytes"], m
assert any(l["type"] == "Convolution" and l["tactic"] == "im2col_sgemm" for l in j["layers"])
assert any(c.get("rejected") for l in j["layers"] for c in l["candidates"])
p = j["plugins"][0]
assert p["name"] == "CropAndResize" and p["library"] == "libkiln_plugins.so" and p["library_hash"]
PY
fi
check "trace renders and checks" "$kiln" trace "$work/demo/trace.jsonl"
cp "$work/last.log" "$work/trace.log"
check "trace shows the clone in the rendered form" grep -q "CropAndResizePlugin#[0-9]*::clone() --> " "$work/trace.log"

if [ -n "$onnx_model" ]; then
  check "build --onnx writes a plan" "$kiln" build --onnx "$onnx_model" --save "$work/onnx.plan"
  check "build --timing-cache writes the cache" bash -c "rm -f '$work/timing.cache' &&
    '$kiln' build --onnx '$onnx_model' --save '$work/cached.plan' --timing-cache '$work/timing.cache' &&
    [ -s '$work/timing.cache' ]"
  check "a second build reads it back" bash -c "'$kiln' build --onnx '$onnx_model' \
    --save '$work/cached.plan' --timing-cache '$work/timing.cache' --verbose 2>&1 |
    grep -q 'from the timing cache'"
  check "run the ONNX plan on 3 contexts" "$kiln" run "$work/onnx.plan" --contexts 3 --output-dir "$work/onnx_out"
  check "run --onnx builds in memory and runs" "$kiln" run --onnx "$onnx_model" --output-dir "$work/onnx_out2"
  check "ONNX run wrote class_scores.npy" test -s "$work/onnx_out2/class_scores.npy"
  refuse "missing ONNX model" "cannot" "$kiln" build --onnx "$work/nope.onnx" --save "$work/x.plan"
  head -c 300 "$onnx_model" >"$work/truncated.onnx"
  refuse "truncated ONNX model" "" "$kiln" run --onnx "$work/truncated.onnx"
  printf 'hello' >"$work/garbage.onnx"
  refuse "not an ONNX model" "" "$kiln" run --onnx "$work/garbage.onnx"
fi

# A shape operand fed as a graph input (the ONNX node test's Reshape with its shape as an input):
# kiln run --onnx builds for the values of its --input file (a shape-value input, as onnxruntime
# runs it) and matches the test's expected output.
reshape_test=${KILN_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}/node/test_reshape_extended_dims
if [ -f "$reshape_test/model.onnx" ] && [ -n "$onnx_model" ]; then
  set0=$reshape_test/test_data_set_0
  check "run --onnx builds for a shape input's values" "$kiln" run --onnx "$reshape_test/model.onnx" \
    --input data="$set0/input_0.pb" --input shape="$set0/input_1.pb" --output-dir "$work/reshape_out"
  check "the shape-value run matches the expected output" "$py" -c "
import sys, numpy as np, onnx, onnx.numpy_helper as h
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
want, got = h.to_array(t), np.load(sys.argv[2])
assert got.shape == want.shape and np.array_equal(got, want), (got.shape, want.shape)
" "$set0/output_0.pb" "$work/reshape_out/reshaped.npy"
  refuse "a shape input without its values says how to give them" "kiln run --input shape=FILE" \
    "$kiln" run --onnx "$reshape_test/model.onnx" --input data="$set0/input_0.pb"
  check "build --shape-values makes a shape-value input" "$kiln" build --onnx \
    "$reshape_test/model.onnx" --shape-values shape:3,2,2,2 --save "$work/reshape.plan"
  check "inspect lists the plan's shape values" grep -q '"values": \[3, 2, 2, 2\]' \
    <("$kiln" inspect "$work/reshape.plan")
  refuse "other values at run time fail the enqueue" "holds 2 at index 0" \
    "$kiln" run "$work/reshape.plan" --input shape="$set0/input_1.pb"
  refuse "--shape-values with a plan is refused" "--shape-values is for building" \
    "$kiln" run "$work/reshape.plan" --shape-values shape:3,2,2,2
fi

# kiln bench on the CPU: two streams, profiled, with its JSON report and Chrome trace.
check "bench a CPU plan on 2 streams, profiled" "$kiln" bench "$plan" --duration 0.2 --iterations 15 \
  --warmup-ms 10 --streams 2 --profile --profile-runs 3 --json "$work/bench.json" \
  --chrome-trace "$work/bench_trace.json" --seed 1
cp "$work/last.log" "$work/bench.log"
for field in "throughput: .* inferences/s, .* items/s" "min  *median  *mean  *p90  *p99  *max" \
  "^  latency  *[0-9]" "^  host enqueue  *[0-9]" "steady clock" "per context" \
  "per-layer times over 3 profiled runs" "Plugin  *CropAndResize" "100.0%"; do
  check "bench output has '$field'" grep -q -- "$field" "$work/bench.log"
done
if $py -c 'import json' 2>/dev/null; then
  check "bench JSON and Chrome trace parse and hold the runs" $py - "$work" <<'PY'
import json, sys
work = sys.argv[1]
r = json.load(open(f"{work}/bench.json"))
assert r["device"] == "cpu" and r["streams"] == 2 and r["latency_clock"] == "steady_clock", r
assert r["timed"]["inferences"] >= 30 and r["timed"]["ms"] >= 200, r["timed"]
assert r["latency_ms"]["count"] == r["enqueue_ms"]["count"] == r["timed"]["inferences"]
for k in ("min", "median", "mean", "p90", "p99", "max"):
    assert r["latency_ms"][k] > 0, k
l = r["latency_ms"]
assert l["min"] <= l["median"] <= l["p90"] <= l["p99"] <= l["max"], l
assert r["throughput"]["inferences_per_s"] > 0 and r["batch_items"] == 1
layers = r["profile"]["layers"]
assert any(x["type"] == "Plugin" and x["tactic"] == "CropAndResize" for x in layers), layers
assert abs(sum(x["share"] for x in layers) - 1) < 1e-6
# On the CPU a layer runs inside its launch: every layer has host time.
assert all(x["host_ms"]["median"] > 0 for x in layers), layers
t = json.load(open(f"{work}/bench_trace.json"))
events = [e for e in t["traceEvents"] if e["ph"] == "X"]
assert len(events) == 3 * (len(layers) + 1), len(events)
assert all(e["dur"] >= 0 and e["ts"] >= 0 and e["name"] for e in events)
assert {x["name"] for x in layers} <= {e["name"] for e in events}
PY
fi
refuse "bench: a bad --streams says what it takes" "--streams takes a whole number from 1 to 64" \
  "$kiln" bench "$plan" --streams 0
refuse "bench: --device on a plan" "a plan runs where it was built for" "$kiln" bench "$plan" --device cpu
refuse "bench: no plan" "usage: kiln bench PLAN" "$kiln" bench
if [ -n "$onnx_model" ]; then
  check "bench --onnx builds in memory and times it" "$kiln" bench --onnx "$onnx_model" \
    --duration 0 --iterations 5 --warmup-ms 0 --no-progress
fi

# Errors: exit 1 with a message.
refuse "unknown --device" "--device takes cpu, cuda or cuda:N" "$kiln" demo --device gpu --out "$work/d"
refuse "--fp16 without CUDA" "--fp16 applies to CUDA" "$kiln" demo --fp16 --out "$work/d"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  refuse "--device cuda without a GPU" "no CUDA device 0\\|without the CUDA backend" "$kiln" demo --device cuda --out "$work/d"
  refuse "--cuda-graph on a CPU plan" "--cuda-graph needs a CUDA plan" "$kiln" run "$plan" --cuda-graph
  refuse "bench --cuda-graph on a CPU plan" "--cuda-graph needs a CUDA plan" "$kiln" bench "$plan" --cuda-graph
  refuse "bench --engine-graphs on a CPU plan" "--engine-graphs needs a CUDA plan" "$kiln" bench \
    "$plan" --engine-graphs
fi
refuse "missing plan file" "cannot open" "$kiln" run "$work/nope.plan"
head -c 1000 "$plan" >"$work/truncated.plan"
refuse "truncated plan" "truncated" "$kiln" run "$work/truncated.plan"
printf 'hello' >"$work/garbage.plan"
refuse "not a plan" "not a kiln plan" "$kiln" inspect "$work/garbage.plan"
refuse "unknown input name" "no input called" "$kiln" run "$plan" --input "nosuch=$work/out/class_scores.npy"
refuse "input of the wrong shape" "expects" "$kiln" run "$plan" --input "boxes=$work/out/class_scores.npy"
refuse "unknown option" "unknown option" "$kiln" run "$plan" --frobnicate
refuse "unknown command" "unknown command" "$kiln" frobnicate
refuse "plugin library that does not exist" "cannot" "$kiln" run "$plan" --plugins "$work/libnope.so"
printf '{"seq":1,"phase":"build"\n' >"$work/bad.jsonl"
refuse "malformed trace" "" "$kiln" trace "$work/bad.jsonl"

[ $failures -eq 0 ] && echo "cli: all checks passed" || { echo "cli: $failures check(s) failed"; exit 1; }
