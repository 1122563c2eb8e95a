#!/bin/sh
# Transformer-era models as PyTorch exports them (ViT, Swin, ConvNeXt, TransformerEncoder with and
# without a causal mask; an EfficientNet for SiLU), run through `kiln run --onnx` and compared with PyTorch's own outputs.
# usage: torch_exports_test.sh KILN_CLI WORK_DIR [--device cuda [--fp16]]
# PyTorch comes from Debian (python3-torch, python3-torchvision; scripts/install-deps.sh installs
# them) and runs with Debian's python3 in isolated mode: no venv, no PyPI, so nothing mixes.
# Without them the test exits 77, which ctest reports as skipped.
set -u
cli=$1
work=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3
if ! "$python" -I -c "import numpy, torch, torchvision" 2>/dev/null; then
  echo "SKIP: Debian's python3-torch and python3-torchvision are not installed (scripts/install-deps.sh)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/out"
# The exporter's warnings (constant folding, tracing) are PyTorch's, not the test's.
"$python" -I "$here/make_models.py" "$work/gen" 2>"$work/export.log" || {
  cat "$work/export.log"
  echo "FAIL: exporting the models"
  exit 1
}
status=0
# Dynamic exports with an optimization profile: one plan, run at two shapes inside it (the lines
# are profile_lines.sh's).
. "$here/profile_lines.sh"
while read -r model shapes runs; do
  [ -n "$model" ] || continue
  build_args=$(profile_build_args "$shapes")
  # shellcheck disable=SC2086 # build_args: one word per argument
  if ! "$cli" build --onnx "$work/gen/$model.onnx" $build_args --save "$work/$model.plan" \
       "$@" >"$work/out/$model.build.log" 2>&1; then
    echo "FAIL $model: kiln build $build_args failed:"
    tail -5 "$work/out/$model.build.log"
    status=1
    continue
  fi
  for run in $runs; do
    # shellcheck disable=SC2046
    "$cli" run "$work/$model.plan" $(profile_run_args "$shapes" "$work/gen" "$run") \
      --output-dir "$work/out/$run" >"$work/out/$run.log" 2>&1 ||
      { echo "FAIL $run: kiln run failed:"; tail -5 "$work/out/$run.log"; status=1; }
  done
done <"$work/gen/profiles.txt"
for name in $(cat "$work/gen/models.txt"); do
  case $name in *.profile*) continue ;; esac
  if ! "$cli" run --onnx "$work/gen/$name.onnx" --input "x=$work/gen/$name.input.npy" \
       --output-dir "$work/out/$name" "$@" >"$work/out/$name.log" 2>&1; then
    echo "FAIL $name: kiln run failed:"
    tail -5 "$work/out/$name.log"
    status=1
  fi
done
# EfficientNet's 13 SiLUs, exported as Sigmoid then Mul, must each become one activation
# (silu_fusion) in a convolution's epilogue (conv_fusion; activation type 23 is kSILU).
if grep -qx efficientnet "$work/gen/models.txt"; then
  log=$work/out/efficientnet.verbose.log
  "$cli" build --onnx "$work/gen/efficientnet.onnx" --save "$work/efficientnet.plan" --verbose \
    "$@" >"$log" 2>&1
  silus=$(grep -c "into one SiLU of" "$log")
  fused=$(grep "pass conv_fusion: fused" "$log" | grep -c "(activation type 23)")
  if [ "$silus" != 13 ] || [ "$fused" != 13 ]; then
    echo "FAIL efficientnet: $silus SiLUs fused by silu_fusion, $fused into convolutions (want 13, 13; $log)"
    status=1
  fi
fi
"$python" -I "$here/compare.py" "$work/gen" "$work/out" || status=1
exit $status
