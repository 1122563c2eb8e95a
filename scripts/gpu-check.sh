#!/usr/bin/env bash
# Everything kiln checks on a GPU, in one run, for the lent H200 machine (or any sm_90 GPU):
#   1. builds kiln for sm_90 there (ONNX parser off: that machine lacks Debian's protobuf/onnx),
#      or uses a bundle made here with `scripts/gpu-check.sh --bundle DIR`;
#   2. runs every `gpu`-labelled test (and the emulated CUDA op tests);
#   3. runs the demo network on CUDA and compares it with the CPU backend;
#   4. runs compute-sanitizer memcheck and racecheck on the CropAndResize and plugin-harness
#      tests;
#   5. runs the CropAndResize benchmark and torchvision's roi_align in the same run;
#   6. prints a short table last.
# Logs go to $OUT (the device tool brings that folder back) or to build/gpu-logs.
#
# usage: scripts/gpu-check.sh [--bundle-from DIR] [--quick]   on the GPU machine
#        scripts/gpu-check.sh --bundle DIR                     here: gather a build to carry there
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

gpu_programs="tests/cuda_runtime/test_cuda_runtime tests/crop_and_resize/test_crop_and_resize_cuda
  tests/plugin_check/test_plugin_check tests/cuda_ops/test_cuda_ops_data_movement
  tests/cuda_ops/test_cuda_ops_math tests/cuda_ops/test_cuda_ops_dense
  bench/crop_and_resize_bench tools/kiln"

if [ "${1:-}" = --bundle ]; then
  out=${2:?usage: gpu-check.sh --bundle DIR}
  build=${KILN_BUILD:-build/release}
  files=()
  for p in $gpu_programs; do [ -x "$build/$p" ] && files+=("$build/$p"); done
  files+=("$build/plugins/libkiln_plugins.so")
  ../shared/device/bundle.sh "$out" "${files[@]}"
  cp bench/*.py "$out/bin/" 2>/dev/null || true
  exit 0
fi

logs=${OUT:-$root/build/gpu-logs}
mkdir -p "$logs"
summary=()
record() { summary+=("$(printf '%-44s %-5s %s' "$1" "$2" "$3")"); }

if [ "${1:-}" = --bundle-from ]; then
  bin="$root/$2/bin"
  export LD_LIBRARY_PATH="$root/$2/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  find_program() { echo "$bin/$(basename "$1")"; }
  shift 2
else
  build=build/gpu
  start=$(date +%s)
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_ONNX=OFF -DKILN_BENCH=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 >"$logs/configure.log" 2>&1 &&
    cmake --build $build -j "$(nproc)" >"$logs/build.log" 2>&1
  rc=$?
  record "build (sm_90, $(nproc) cores)" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(($(date +%s) - start)) s"
  if [ $rc != 0 ]; then tail -40 "$logs/build.log"; printf '%s\n' "${summary[@]}"; exit 1; fi
  find_program() { echo "$root/$build/$1"; }
fi
quick=0
[ "${1:-}" = --quick ] && quick=1

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
  >"$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt"

# 2. gpu tests (each program whole: gtest prints its own failures into the log)
for p in tests/cuda_runtime/test_cuda_runtime tests/crop_and_resize/test_crop_and_resize_cuda \
         tests/plugin_check/test_plugin_check tests/cuda_ops/test_cuda_ops_data_movement \
         tests/cuda_ops/test_cuda_ops_math tests/cuda_ops/test_cuda_ops_dense; do
  exe=$(find_program "$p")
  name=$(basename "$p")
  if [ ! -x "$exe" ]; then record "$name" "MISS" "not built"; continue; fi
  start=$(date +%s)
  "$exe" --gtest_brief=1 >"$logs/$name.log" 2>&1
  rc=$?
  passed=$(grep -c '^\[       OK \]' "$logs/$name.log")
  failed=$(grep -c '^\[  FAILED  \]' "$logs/$name.log")
  skipped=$(grep -c '^\[  SKIPPED \]' "$logs/$name.log")
  record "$name" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
    "$(grep -m1 -o '[0-9]* tests\? from [0-9]* test suites\? ran' "$logs/$name.log" | head -1); failed lines $failed, skipped $skipped, $(($(date +%s) - start)) s"
  [ $rc != 0 ] && grep -E '^\[  FAILED  \]|Failure|error' "$logs/$name.log" | head -20
done

# 3. the demo network on CUDA against the CPU backend
kiln=$(find_program tools/kiln)
for mode in "" "--fp16"; do
  "$kiln" demo --device cuda $mode --out "$logs/demo$mode" >"$logs/demo$mode.log" 2>&1
  rc=$?
  record "kiln demo --device cuda $mode" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
    "$(grep -o 'worst relative difference [^ ]*' "$logs/demo$mode.log")"
done
"$kiln" run "$logs/demo/demo.plan" --contexts 4 --runs 20 --cuda-graph >"$logs/graph.log" 2>&1
rc=$?
record "kiln run --cuda-graph (4 contexts)" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(head -1 "$logs/graph.log")"

# 4. compute-sanitizer
if [ $quick = 0 ] && command -v compute-sanitizer >/dev/null; then
  for p in tests/crop_and_resize/test_crop_and_resize_cuda tests/plugin_check/test_plugin_check; do
    exe=$(find_program "$p")
    [ -x "$exe" ] || continue
    for tool in memcheck racecheck; do
      name="$(basename "$p") $tool"
      start=$(date +%s)
      compute-sanitizer --tool $tool --error-exitcode 9 "$exe" --gtest_brief=1 \
        >"$logs/$(basename "$p").$tool.log" 2>&1
      rc=$?
      record "$name" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
        "$(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$logs/$(basename "$p").$tool.log"), $(($(date +%s) - start)) s"
    done
  done
fi

# 5. benchmark: kiln, the baseline kernel and torchvision's roi_align in the same run
bench=$(find_program bench/crop_and_resize_bench)
if [ -x "$bench" ]; then
  script_dir=$root/bench
  [ -f "$script_dir/crop_and_resize_torchvision.py" ] || script_dir=$(dirname "$bench")
  PYTHONUNBUFFERED=1 python3 "$script_dir/crop_and_resize_torchvision.py" --out "$logs/torchvision.csv" \
    >"$logs/torchvision.log" 2>&1
  record "torchvision roi_align peer" "$([ $? = 0 ] && echo ok || echo FAIL)" "$logs/torchvision.csv"
  "$bench" --torch-results "$logs/torchvision.csv" >"$logs/bench.txt" 2>&1
  rc=$?
  record "crop_and_resize_bench" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$logs/bench.txt"
  cat "$logs/bench.txt"
fi

echo
echo "=== kiln gpu-check: $(head -2 "$logs/gpu.txt" | tail -1) ==="
printf '%s\n' "${summary[@]}"
