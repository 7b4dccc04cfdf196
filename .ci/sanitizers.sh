#!/usr/bin/env bash
# CI stage: the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer, the
# concurrency tests (tag "concurrency") under ThreadSanitizer, and a 30 s run of every fuzzer.
# Called by .ci/run; runnable alone. About 15 min on 2 cores from a cold cache (each sanitizer
# has its own output tree, see .bazelrc --platform_suffix, so reruns are incremental).
#
#   .ci/sanitizers.sh                 # all three
#   FUZZ_SECONDS=300 .ci/sanitizers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s (%s)\n' "$1" "$(date +%H:%M:%S)"; }

step "ASan + UBSan: every test"
# Includes the gpu-tagged tests, which skip without a GPU. On a GPU host add -gpu to the
# --test_tag_filters below: ASan's shadow memory collides with the CUDA runtime's address-space
# reservations (it would need ASAN_OPTIONS=protect_shadow_gap=0).
# The Python module's tests (tag "python") are left out: an ASan-instrumented extension module
# cannot be loaded into Debian's uninstrumented /usr/bin/python3. The library code they reach is
# covered by the C++ tests. The multi-process tests (tag "mpi") are left out too: LeakSanitizer
# reports Open MPI's own allocations (~120 kB in ~3,300 blocks per rank for a bare MPI_Init +
# MPI_Finalize, measured with mpicc -fsanitize=address), which no instrumentation of ours fixes.
# The installed-library test (tag "installed") is left out for the Python module's reason: it
# links the instrumented libhogwild.so into programs that CMake and make build uninstrumented.
# --build_tests_only: the benchmarks and binaries no test runs are not built a second time here
# (the cold run of .ci/run must stay well inside CI's time limit).
bazel test --config=asan_ubsan --test_tag_filters=-python,-mpi,-installed --build_tests_only //...

step "TSan: concurrency tests"
# The suppressions (tools/tsan_suppressions.txt: oneDNN's internal cache only) by absolute path;
# the other options as in .bazelrc's tsan config, which this --test_env replaces.
bazel test --config=tsan --test_tag_filters=concurrency --build_tests_only \
  --test_env=TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:suppressions=$PWD/tools/tsan_suppressions.txt" \
  //...

step "libFuzzer: ${FUZZ_SECONDS:-30} s per reader"
tools/fuzz.sh "${FUZZ_SECONDS:-30}"

step "sanitizers and fuzzers passed"
