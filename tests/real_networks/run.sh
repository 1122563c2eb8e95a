#!/bin/sh
# Real-network comparison against ONNX Runtime: generates the models, then runs compare.py.
# usage: run.sh KILN_CLI WORK_DIR
# The Python environment (onnx, onnxruntime, numpy from PyPI) is a venv cached in WORK_DIR; when
# it cannot be created (no network), exits 77, which ctest reports as skipped.
set -u
cli=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
venv=$work/venv
# Debian's interpreter: it has venv and ensurepip; a pyenv python3 on PATH may not.
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# The cached venv is reused while it still imports (a system Python upgrade can break it).
if [ ! -f "$venv/.kiln-ready" ] ||
   ! "$venv/bin/python" -c 'import numpy, onnx, onnxruntime' 2>/dev/null; then
  rm -rf "$venv"
  # Short timeouts: without a network, pip's default retries would take minutes to give up.
  if ! "$python" -m venv --system-site-packages "$venv" ||
     ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --timeout 20 \
         --retries 1 'onnx==1.*' onnxruntime numpy; then
    echo "SKIP: could not create a Python venv with onnx and onnxruntime from PyPI (no network?)"
    rm -rf "$venv"
    exit 77
  fi
  touch "$venv/.kiln-ready"
fi

rm -rf "$work/models"
"$venv/bin/python" "$here/make_models.py" "$work/models" || exit 1
exec "$venv/bin/python" "$here/compare.py" "$cli" "$work/models"
