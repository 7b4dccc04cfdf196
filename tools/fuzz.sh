#!/usr/bin/env bash
# Builds the parser fuzzers with clang's libFuzzer (+ AddressSanitizer and UBSan) and runs each
# for a fixed time. Plain clang++ rather than Bazel: the targets need only a few sources, and the
# Bazel toolchain here is GCC, which has no libFuzzer.
#
#   tools/fuzz.sh              # CI: 30 s per fuzzer
#   tools/fuzz.sh 3600         # developers: an hour each (or more; see tests/fuzz/README.md)
#   tools/fuzz.sh 60 idx       # one fuzzer
#
# A crash stops with the input saved as $FUZZ_OUT/artifacts/<fuzzer>-crash-…; copy it into
# tests/fuzz/regressions/<fuzzer>/ (replayed by //tests:fuzz_regression_test) and fix the parser.
# New interesting inputs go to $FUZZ_OUT/corpus/<fuzzer>, never into the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
shift || true
fuzzers=("$@")
((${#fuzzers[@]})) || fuzzers=(idx checkpoint libsvm cifar10)
out="${FUZZ_OUT:-${TMPDIR:-/tmp}/hogwild-fuzz}"
mkdir -p "$out/bin" "$out/artifacts"

if ! command -v clang++ >/dev/null || ! clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a |
  grep -q /; then
  echo "fuzz: clang++ with libFuzzer is missing: run tools/setup.sh (clang, libclang-rt-14-dev)" >&2
  exit 1
fi

cxxflags=(-std=c++20 -g -O1 -I. -fsanitize=fuzzer,address,undefined
  -fno-sanitize-recover=undefined -Wall -Wextra -Werror -Wno-missing-field-initializers)
# The same Abseil libraries the Bazel build links (Debian's shared libraries, built with GCC:
# same libstdc++ ABI).
absl_libs=$(pkg-config --libs absl_status absl_statusor absl_str_format absl_strings)

declare -A sources=(
  [idx]="tests/fuzz/idx_fuzzer.cc trainer/data/idx_reader.cc"
  [checkpoint]="tests/fuzz/checkpoint_fuzzer.cc trainer/checkpoint/checkpoint.cc trainer/checkpoint/checkpoint_file.cc core/mode.cc core/capabilities.cc trainer/finite_check.cc core/atomic_file.cc sync/outer_optimizer.cc"
  [libsvm]="tests/fuzz/libsvm_fuzzer.cc sparse/libsvm_reader.cc sparse/sparse_dataset.cc core/text_lines.cc"
  [cifar10]="tests/fuzz/cifar10_fuzzer.cc trainer/data/cifar10.cc"
)

status=0
for f in "${fuzzers[@]}"; do
  [[ -n "${sources[$f]:-}" ]] || { echo "fuzz: unknown fuzzer '$f' (idx, checkpoint, libsvm, cifar10)" >&2; exit 2; }
  bin="$out/bin/${f}_fuzzer"
  echo "fuzz: building $bin"
  # shellcheck disable=SC2086
  clang++ "${cxxflags[@]}" ${sources[$f]} -o "$bin" $absl_libs -lz
  corpus="$out/corpus/$f"
  mkdir -p "$corpus"
  seeds=(tests/fuzz/corpus/"$f")
  [[ -d tests/fuzz/regressions/"$f" ]] && seeds+=(tests/fuzz/regressions/"$f")
  echo "fuzz: running $f for ${seconds} s"
  # -rss_limit_mb: a forged size field must not make a parser allocate gigabytes (the parsers
  # reject counts larger than the input before allocating).
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" "$corpus" "${seeds[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/artifacts/$f-" \
    2>"$out/$f.log"; then
    echo "fuzz: $f FOUND A CRASH; the input is in $out/artifacts/ (log: $out/$f.log)" >&2
    tail -40 "$out/$f.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/$f.log" | sed "s/^/fuzz: $f /"
  fi
done
exit "$status"
