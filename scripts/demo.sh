#!/usr/bin/env bash
# The main job: build kiln (Release) and run the bundled demo detector, on the GPU where there is
# one (and kiln was built with CUDA; the CUDA run is then also compared with the CPU backend),
# else on the CPU backend, twice:
#   1. the ONNX model models/demo_detector.onnx (a CropAndResize node resolved to kiln's plugin),
#      parsed, built and run on two contexts at once;
#   2. the same detector built with the C++ API (`kiln demo`): plan and lifecycle trace written to
#      OUT_DIR, reloaded in a fresh runtime, run on two contexts, trace checked against the
#      plugin contract's eight guarantees.
# usage: scripts/demo.sh [OUT_DIR]   (default: out/demo)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
out=${1:-out/demo}
mkdir -p "$out"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release --target kiln_cli
kiln=build/release/tools/kiln
device=${KILN_DEVICE:-cpu}
if [ -z "${KILN_DEVICE:-}" ] && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 &&
   grep -q '^KILN_CUDA:BOOL=ON' build/release/CMakeCache.txt; then
  device=cuda
fi
echo "(device: $device; KILN_DEVICE=cpu|cuda chooses)"
echo "=== ONNX: models/demo_detector.onnx ==="
"$kiln" build --onnx models/demo_detector.onnx --device "$device" --save "$out/demo_detector.plan"
"$kiln" run "$out/demo_detector.plan" --contexts 2 --output-dir "$out/onnx"
echo
echo "=== C++ API: kiln demo ==="
"$kiln" demo --device "$device" --out "$out"
