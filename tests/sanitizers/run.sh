#!/usr/bin/env bash
# Builds the whole suite with AddressSanitizer and UndefinedBehaviorSanitizer into build-asan/ and
# runs it; a report fails the test that caused it. CAF header reports are suppressed by name, with
# the reason, in ubsan.supp. deploy/quickstart.sh test (and so CI) runs it after the Release suite.
# A directory-wide ccache is used when CMAKE_CXX_COMPILER_LAUNCHER is set in the environment.
#   tests/sanitizers/run.sh [CTEST_ARGS...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"
# -O1 -g1: line numbers in reports, and a build about as fast as the Release one.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DKAS_SANITIZE=address,undefined >/dev/null
cmake --build build-asan -j "$jobs"
supp="$root/tests/sanitizers"
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1" \
LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp" \
KAS_CLUSTER_TEST_DIVISOR=10 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" "$@"
