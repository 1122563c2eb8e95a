#!/usr/bin/env bash
# Builds kiln and runs every test: a Release pass, then the whole suite again under
# AddressSanitizer + UndefinedBehaviorSanitizer (at -O1, as ASan recommends; it also compiles
# faster, which keeps CI well inside its time; that pass builds without the CUDA backend, whose
# device code compute-sanitizer checks on a GPU instead: scripts/gpu-check.sh). GPU tests (ctest
# label `gpu`) skip with their reason where there is no GPU. KILN_TSAN=1 adds a ThreadSanitizer pass over
# the concurrency tests; KILN_SKIP_ASAN=1 skips the sanitizer pass (quick local runs).
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

run_pass release build/release -DCMAKE_BUILD_TYPE=Release -DKILN_TESTS=ON
if [ "${KILN_SKIP_ASAN:-0}" != 1 ]; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_pass "asan+ubsan" build/asan -DCMAKE_BUILD_TYPE=Debug -DKILN_TESTS=ON \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DKILN_SANITIZE=address,undefined -DKILN_CUDA=OFF
fi
if [ "${KILN_TSAN:-0}" = 1 ]; then
  echo "=== kiln tests: tsan (concurrency) ==="
  cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=thread >/dev/null
  cmake --build build/tsan -j "$jobs" --target test_runtime test_lifecycle
  TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/runtime/test_runtime --gtest_filter='Concurrency.*'
  TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/lifecycle/test_lifecycle --gtest_filter='*SeveralContexts*'
fi
