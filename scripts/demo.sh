#!/usr/bin/env bash
# The main job: build kiln (Release) and run the bundled demo detector on the CPU backend.
# usage: scripts/demo.sh [OUT_DIR]   (default: out/demo)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
out=${1:-out/demo}
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_TESTS=OFF >/dev/null
cmake --build build/release --target kiln_cli
build/release/tools/kiln demo --out "$out"
