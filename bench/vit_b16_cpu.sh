#!/bin/sh
# ViT-B/16 batch 1 on this machine's CPU (issue 11, item 5): kiln against onnxruntime in one
# session. torchvision's vit_b_16 with random weights, exported by Debian's torch 1.13 at opset 17;
# kiln's build time (wall clock of `kiln build`, cold: no timing cache), kiln's latency from
# `kiln bench` (steady clock around each inference, median), onnxruntime's as the median of 20
# run() calls after 3 warm-ups, on 1 thread and at its default; the outputs compared.
# usage: bench/vit_b16_cpu.sh KILN PYTHON_WITH_ONNXRUNTIME WORK_DIR
set -eu
kiln=$1
ort_python=$2
work=$3
mkdir -p "$work"
/usr/bin/python3 -I - "$work" <<'PY'
import sys, numpy as np, torch, torchvision
work = sys.argv[1]
torch.manual_seed(0)
m = torchvision.models.vit_b_16(weights=None).eval()
# torchvision zero-initialises the head: its output would be all zeros, hiding every difference.
with torch.no_grad():
    for p in m.parameters():
        if p.abs().sum() == 0:
            p.normal_(0, 0.05)
x = torch.randn(1, 3, 224, 224)
torch.onnx.export(m, (x,), f"{work}/vit_b16.onnx", opset_version=17, input_names=["x"],
                  output_names=["y"])
np.save(f"{work}/input.npy", x.numpy())
print("exported with torch", torch.__version__)
PY
start=$(date +%s.%N)
"$kiln" build --onnx "$work/vit_b16.onnx" --save "$work/vit_b16.plan" --verbose >"$work/build.log" 2>&1
end=$(date +%s.%N)
echo "kiln build: $(echo "$end - $start" | bc) s"
grep -c "rejected: \|not timed: \|dropped after one run" "$work/build.log" | sed 's/^/  candidates not timed in full: /'
"$kiln" bench "$work/vit_b16.plan" --no-progress --duration 10 --json "$work/bench.json" \
  >"$work/bench.log" 2>&1
grep -A3 "time (ms)" "$work/bench.log"
"$kiln" run "$work/vit_b16.plan" --input "x=$work/input.npy" --output-dir "$work/out" >/dev/null
"$ort_python" - "$work" <<'PY'
import sys, time, json, numpy as np, onnxruntime as ort
work = sys.argv[1]
x = np.load(f"{work}/input.npy")
kiln_y = np.load(f"{work}/out/y.npy")
kiln_ms = json.load(open(f"{work}/bench.json"))["latency_ms"]["median"]
for threads in (1, 0):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    s = ort.InferenceSession(f"{work}/vit_b16.onnx", so, providers=["CPUExecutionProvider"])
    for _ in range(3):
        y = s.run(None, {"x": x})[0]
    t = []
    for _ in range(20):
        a = time.perf_counter(); s.run(None, {"x": x}); t.append(time.perf_counter() - a)
    ms = 1000 * float(np.median(t))
    rel = float(np.linalg.norm(kiln_y - y) / np.linalg.norm(y))
    print(f"onnxruntime {ort.__version__}, {'1 thread' if threads == 1 else 'default threads'}: "
          f"{ms:.1f} ms; kiln {kiln_ms:.1f} ms ({ms / kiln_ms:.2f}x onnxruntime's speed); "
          f"outputs' relative L2 {rel:.2e}")
PY
