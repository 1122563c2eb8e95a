#!/bin/sh
# Real-network comparison against ONNX Runtime: generates the models, then runs compare.py.
# usage: real_networks_test.sh KILN_CLI WORK_DIR
# The Python packages (onnx, onnxruntime, numpy and their dependencies, each pinned in
# requirements.txt beside this script) come from PyPI into a venv cached in WORK_DIR that is
# isolated from the system's site packages: Debian's python3-onnx or python3-numpy, where
# installed, are never seen. When the venv cannot be created (no network), exits 77, which ctest
# reports as skipped.
set -u
cli=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
requirements=$here/requirements.txt
venv=$work/venv
# Debian's interpreter: it has venv and ensurepip; a pyenv python3 on PATH may not.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
# Every Python command below runs with -I (isolated mode): PYTHONPATH, PYTHONHOME and the user's
# site packages are ignored too.

# Prints the versions in use and fails unless every package matches its pin in requirements.txt.
versions='
import importlib.metadata, os, platform, sys
import numpy, onnx, onnxruntime
wrong = []
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, pinned = line.split("==")
        if importlib.metadata.version(name) != pinned:
            wrong.append(f"{name} {importlib.metadata.version(name)} (pinned {pinned})")
print(f"real_networks: Python {platform.python_version()} ({os.path.realpath(sys.executable)}, "
      f"isolated venv {sys.prefix}), onnx {onnx.__version__}, "
      f"onnxruntime {onnxruntime.__version__}, numpy {numpy.__version__}")
if wrong:
    sys.exit("FAIL: the venv does not match requirements.txt: " + ", ".join(wrong))
'

# The marker records the requirements the venv was made from. The cached venv is rebuilt when the
# pins change, when it was made with system site packages (as this script once did), and when it no
# longer imports or its versions drifted (a system Python upgrade can break it).
want="requirements sha256 $(sha256sum <"$requirements" | cut -d' ' -f1), isolated"
if [ "$(cat "$venv/.kiln-ready" 2>/dev/null)" != "$want" ] ||
   ! grep -qx 'include-system-site-packages = false' "$venv/pyvenv.cfg" 2>/dev/null ||
   ! "$venv/bin/python" -I -c "$versions" "$requirements" >/dev/null 2>&1; then
  rm -rf "$venv"
  # Short timeouts: without a network, pip's default retries would take minutes to give up.
  # --no-deps: requirements.txt pins the dependencies too, and pip check below proves it complete,
  # so nothing unpinned is ever installed.
  if ! "$python" -I -m venv "$venv" ||
     ! "$venv/bin/python" -I -m pip install --quiet --disable-pip-version-check --timeout 20 \
         --retries 1 --no-deps -r "$requirements"; then
    echo "SKIP: could not create an isolated Python venv with $requirements from PyPI (no network?)"
    rm -rf "$venv"
    exit 77
  fi
  if ! check=$("$venv/bin/python" -I -m pip check --disable-pip-version-check 2>&1); then
    echo "$check"
    echo "FAIL: $requirements does not pin every dependency (pip check above)"
    rm -rf "$venv"
    exit 1
  fi
  echo "$want" >"$venv/.kiln-ready"
fi
"$venv/bin/python" -I -c "$versions" "$requirements" || exit 1

rm -rf "$work/models"
"$venv/bin/python" -I "$here/make_models.py" "$work/models" || exit 1
exec "$venv/bin/python" -I "$here/compare.py" "$cli" "$work/models"
