#!/usr/bin/env bash
# Builds kiln and runs every test: a Release pass, then the whole suite again under
# AddressSanitizer + UndefinedBehaviorSanitizer (at -O1, as ASan recommends; it also compiles
# faster, which keeps CI well inside its time; that pass builds without the CUDA backend, whose
# device code compute-sanitizer checks on a GPU instead: scripts/gpu-check.sh). GPU tests (ctest
# label `gpu`) skip with their reason where there is no GPU. KILN_TSAN=1 adds a ThreadSanitizer pass over
# the concurrency tests; KILN_SKIP_ASAN=1 skips the sanitizer pass (quick local runs).
# Between them, the Python package: `pip install .` in a fresh venv (PyPI packages pinned in
# python/requirements-ci.txt, no system site packages), then its pytest suite; skipped with a
# message when PyPI cannot be reached; KILN_SKIP_PYTHON=1 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=${KILN_JOBS:-$(nproc)}
# The NumPy interop tests use Debian's python3 (python3-numpy), not one earlier on PATH.
[ -x /usr/bin/python3 ] && export KILN_PYTHON=${KILN_PYTHON:-/usr/bin/python3}

run_pass() {  # name, build dir, extra cmake args...
  local name=$1 dir=$2; shift 2
  echo "=== kiln tests: $name ==="
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600
}

# The Python package, as a user installs it: a fresh venv (PyPI only, every package pinned),
# `pip install .` from this clone (scikit-build-core: the top-level CMake with KILN_PYTHON=ON,
# KILN_TESTS=OFF; CUDA when nvcc is there, as for any build), then pytest on python/tests.
run_python() {
  echo "=== kiln tests: python (pip install . in a fresh venv, then pytest) ==="
  local venv=build/python-venv requirements=python/requirements-ci.txt start=$SECONDS
  local python=/usr/bin/python3
  [ -x "$python" ] || python=python3
  rm -rf "$venv"
  # Short timeouts: without a network, pip's default retries would take minutes to give up.
  if ! "$python" -I -m venv "$venv" ||
     ! "$venv/bin/python" -I -m pip install --quiet --disable-pip-version-check --timeout 20 \
         --retries 1 --no-deps -r "$requirements"; then
    echo "SKIP: python: could not create an isolated venv with $requirements from PyPI (no network?)"
    rm -rf "$venv"
    return 0
  fi
  "$venv/bin/python" -I -m pip check --disable-pip-version-check ||
    { echo "FAIL: $requirements does not pin every dependency"; return 1; }
  # scikit-build-core builds in the Release pass's tree (its build-dir setting), so the package
  # is the libraries that pass built and tested, plus the extension: compiling everything a third
  # time would cost CI a tenth of its time. The venv and pip install are fresh, as a user's are.
  local settings=(--config-settings=build-dir=build/release)
  echo "python: pip install . (log in build/python-install.log)"
  if ! CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$venv/bin/python" -I -m pip install \
       --disable-pip-version-check --no-build-isolation --no-deps "${settings[@]}" -v . \
       >build/python-install.log 2>&1; then
    tail -60 build/python-install.log
    echo "FAIL: pip install ."
    return 1
  fi
  echo "python: installed in $((SECONDS - start)) s"
  # From build/, so that `import kiln` is the installed package and not a source folder.
  (cd build && "$root/$venv/bin/python" -I -m pytest -q -p no:cacheprovider "$root/python/tests")
  echo "python: $((SECONDS - start)) s in all"
}
root=$(pwd)

# KILN_PYTHON=OFF: the Python pass turns it on in this tree (pip install); each run starts without.
run_pass release build/release -DCMAKE_BUILD_TYPE=Release -DKILN_TESTS=ON -DKILN_PYTHON=OFF
[ "${KILN_SKIP_PYTHON:-0}" = 1 ] || run_python
if [ "${KILN_SKIP_ASAN:-0}" != 1 ]; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_pass "asan+ubsan" build/asan -DCMAKE_BUILD_TYPE=Debug -DKILN_TESTS=ON \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DKILN_SANITIZE=address,undefined -DKILN_CUDA=OFF
fi
if [ "${KILN_TSAN:-0}" = 1 ]; then
  echo "=== kiln tests: tsan (concurrency) ==="
  cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=thread >/dev/null
  cmake --build build/tsan -j "$jobs" --target test_runtime test_lifecycle test_backends_cpu
  TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/runtime/test_runtime --gtest_filter='Concurrency.*'
  TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/lifecycle/test_lifecycle --gtest_filter='*SeveralContexts*'
  # The CPU backend's thread pool and sgemm on it, with more workers than cores.
  TSAN_OPTIONS=halt_on_error=1 KILN_CPU_THREADS=4 build/tsan/tests/backends/cpu/test_backends_cpu \
    --gtest_filter='ThreadPool.*:SgemmThreads.*'
fi
