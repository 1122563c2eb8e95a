#!/usr/bin/env bash
# `kiln check-plugin` end to end: CropAndResize (both forms) and the example ScaleBias library
# pass with exit status 0 and a table; errors exit 1 with a message.
# usage: check_plugin_cli_test.sh KILN PLUGINS_LIB EXAMPLE_LIB WORK_DIR DEVICE   (DEVICE: cpu|all)
set -uo pipefail
kiln=$1 plugins=$2 example=$3 work=$4 device=$5
rm -rf "$work" && mkdir -p "$work"
failures=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@" >"$work/last.log" 2>&1; then echo "ok   $what"; else
    echo "FAIL $what"; sed 's/^/     /' "$work/last.log" | tail -40; failures=$((failures + 1)); fi
}
refuse() {  # description, expected message fragment, then a command that must exit 1
  local what=$1 want=$2; shift 2
  "$@" >"$work/last.log" 2>&1
  local rc=$?
  if [ $rc -eq 1 ] && grep -q -- "$want" "$work/last.log"; then echo "ok   $what"; else
    echo "FAIL $what (exit $rc, wanted 1 and '$want')"; sed 's/^/     /' "$work/last.log" | tail -10
    failures=$((failures + 1)); fi
}

check "CropAndResize, 3 inputs (TensorFlow form)" "$kiln" check-plugin --plugins "$plugins" \
  --plugin CropAndResize:1 --field crop_height=7 --field crop_width=7 \
  --input 2x16x20x24 --input 10x4:fp32:0:1 --input 10:int32:0:2 --device "$device" \
  --trace "$work/trace.jsonl"
cp "$work/last.log" "$work/crop3.log"
check "the table has the guarantee rows and a PASS summary" \
  grep -q "plugin check: .* 0 failed.*PASS" "$work/crop3.log"
check "the table has a passing guarantee 8 row" grep -q "^pass  *guarantee 8" "$work/crop3.log"
check "the kept trace satisfies guarantees 1-9" "$kiln" trace "$work/trace.jsonl"
check "CropAndResize through a profile (batch 1..3, boxes 1..12)" "$kiln" check-plugin \
  --plugin CropAndResize:1 --field crop_height=4 --field crop_width=3 \
  --input 2x8x10x12 --input 5x4:fp32:0:1 --input 5:int32:0:2 --device "$device" \
  --profile 1x8x10x12:3x8x10x12 --profile 1x4:12x4 --profile 1:12 \
  --dim-name 1.0=K --dim-name 2.0=K --profile-shapes 2 --max-combinations 2 --no-empty \
  --trace "$work/profile_trace.jsonl"
cp "$work/last.log" "$work/profile.log"
check "the profile rows: build, 5 shapes, bounds" bash -c \
  "grep -q '^pass  *profile build' '$work/profile.log' &&
   [ \$(grep -c '^pass  *profile shapes  *cpu' '$work/profile.log') -eq 5 ] &&
   grep -q '^pass  *profile bounds' '$work/profile.log' &&
   grep -q '^pass  *guarantee 9' '$work/profile.log'"
check "the profile run's trace has shape changes and holds guarantees 1-9" bash -c \
  "grep -q '\"call\":\"onShapeChange\"' '$work/profile_trace.jsonl' &&
   '$kiln' trace '$work/profile_trace.jsonl'"
check "CropAndResize, 2 inputs, nearest" "$kiln" check-plugin --plugin CropAndResize \
  --field crop_height=3 --field crop_width=5 --field method=nearest --field extrapolation_value=-1 \
  --input 2x3x8x8 --input 2x4x4:fp32:0:1 --device "$device" --contexts 4 --iterations 3 \
  --tolerance fp16=2.5:0 --tolerance bf16=2.5:0  # nearest on rounded boxes may pick a neighbour
check "example ScaleBias library" "$kiln" check-plugin --plugins "$example" --plugin ScaleBias \
  --field scale=2 --field bias=0.5 --input 2x3x4x5 --device "$device"
cp "$work/last.log" "$work/scale_bias.log"
check "ScaleBias checked fp16 as well" grep -q "fp16/linear -> fp16/linear" "$work/scale_bias.log"
if [ "$device" = all ] && grep -q "^skip  *device  *cuda:0" "$work/scale_bias.log"; then
  echo "skip CUDA rows: $(grep "^skip  *device  *cuda:0" "$work/scale_bias.log" | sed 's/  */ /g')"
elif [ "$device" = all ]; then
  check "ScaleBias: CUDA agrees with the CPU" grep -q "^pass  *devices agree *cuda:0" "$work/scale_bias.log"
  check "ScaleBias: CUDA graph replay" grep -q "^pass  *CUDA graph *cuda:0" "$work/scale_bias.log"
fi

refuse "unknown plugin" "no plugin NoSuch" "$kiln" check-plugin --plugin NoSuch --input 2x3
refuse "misspelt field names the known ones" "crop_width" "$kiln" check-plugin \
  --plugin CropAndResize --field crop_hieght=7 --input 2x3x4x5
refuse "field value of the wrong type" "int32" "$kiln" check-plugin \
  --plugin CropAndResize --field crop_height=7.5 --input 2x3x4x5
refuse "bad input shape" "bad shape" "$kiln" check-plugin --plugin CropAndResize --input 2xx3
refuse "a plugin that fails a check exits 1" "some checks failed" "$kiln" check-plugin \
  --plugin CropAndResize --field crop_height=0 --field crop_width=2 \
  --input 2x3x4x5 --input 3x4 --input 3:int32
refuse "a --profile per --input" "one MIN:MAX per --input" "$kiln" check-plugin \
  --plugin CropAndResize --input 2x3x4x5 --input 3x4 --input 3:int32 --profile 1x3x4x5:2x3x4x5
refuse "an unknown device is refused" "--device takes" "$kiln" check-plugin \
  --plugin CropAndResize --input 2x3x4x5 --device nosuch

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
