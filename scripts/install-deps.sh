#!/usr/bin/env bash
# Installs the Debian packages kiln needs, if any are missing. Safe to run again.
# usage: scripts/install-deps.sh [extra-package ...]
set -euo pipefail
# python3-onnx: no test uses it. It is here so that CI runs with it present, as on many Debian
# machines, and proves the real-network test's isolated venv (tests/real_networks) ignores it.
# python3-dev: Python's headers, for the Python package's extension (python/, `pip install .`).
# python3-torch, python3-torchvision: PyTorch 1.13 exports the transformer models of
# tests/torch_exports, run with Debian's python3 (never from a venv, never mixed with PyPI).
packages=(cmake ninja-build g++ make libgtest-dev libgmock-dev python3 python3-numpy python3-venv
          python3-dev python3-onnx python3-torch python3-torchvision libonnx-dev libprotobuf-dev
          protobuf-compiler libonnx-testdata "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "kiln: installing missing packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
