#!/usr/bin/env bash
# The GPU check: runs every `gpu`-tagged test, then a ~60 s benchmark of the MLP 784-256-256-10
# train step (batch 64 and 1024, 1 and 4 workers on GPU 0) with a PyTorch eager comparison and
# the cuBLAS GEMM limit, and prints a short table last. Whole run: under 8 minutes.
#
# Two halves, because the GPU machine has the NVIDIA driver, nvcc, CMake, ninja and PyTorch but
# no Bazel, no package registry, and (as far as we know) none of the Debian -dev packages the
# project builds against (Abseil, oneTBB, GoogleTest, OpenBLAS):
#
#   tools/gpu_check.sh --bundle [DIR]   on a build machine (Bazel, CUDA toolkit; no GPU needed):
#       builds the gpu tests and benchmarks/gpu_mlp_benchmark with Bazel and copies them into
#       DIR (default .gpu_bundle, git-ignored) with every shared library they need that a bare
#       CUDA machine may lack (Bazel's own _solib libraries, Abseil, oneTBB, OpenBLAS with its
#       Fortran runtime, zlib, libatomic, the CUDA runtime; libstdc++/libgcc_s as a fallback
#       used only if the machine's own are older). Then checks that the copies resolve every
#       library from DIR and start (they skip cleanly here when there is no GPU).
#   tools/gpu_check.sh [DIR]            on the GPU machine: checks the driver and the GPU, finds
#       cuBLAS/cuBLASLt, NCCL and cuDNN (CUDA 13) in the CUDA toolkit or PyTorch's nvidia-*
#       wheels, checks that every binary loads, runs the tests and the benchmark, prints the
#       table. Needs only bash, coreutils, python3 (+ PyTorch for the comparison).
#
# Why carried binaries rather than a build there: the build needs Abseil, oneTBB, GoogleTest and
# OpenBLAS headers and libraries, which the GPU machine lacks and cannot install; carrying their
# .so files is simpler and smaller than carrying their sources. The binaries are CUDA 13 builds
# (sm_80 and sm_90 code, compute_90 PTX) and need a CUDA 13 driver (>= 580): the H200 machines
# this project is lent have CUDA 13.0 and driver 580. cuBLAS(Lt), NCCL and cuDNN are too large
# to carry (cuBLASLt alone is ~540 MB) and are taken from the GPU machine.
#
# Exit status: 0 all tests passed and the benchmark ran; 1 a test or the benchmark failed;
# 2 no NVIDIA GPU / driver, or no bundle (the message says what to do).
#
# Example, from a session with the device tool:
#   tools/gpu_check.sh --bundle                      # here
#   run(command="tools/gpu_check.sh", carry=[".gpu_bundle"], timeout_s=540)
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo" || exit 2

log() { printf '[gpu_check] %s\n' "$*" >&2; }
die() { local code=$1; shift; printf 'gpu_check: %s\n' "$*" >&2; exit "$code"; }

# Libraries a CUDA machine provides itself (the driver, the C library) or that are too large to
# carry (taken from the CUDA toolkit or PyTorch's wheels there).
is_system_lib() {
  case "$1" in
    linux-vdso.so*|ld-linux*|libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libcuda.so*) return 0 ;;
    libcublas.so*|libcublasLt.so*|libnccl.so*|libcudnn*.so*) return 0 ;;
  esac
  return 1
}

bundle() {
  local out="${1:-$repo/.gpu_bundle}"
  command -v bazel >/dev/null || die 2 "--bundle needs Bazel (run it on a build machine)"
  log "finding the gpu-tagged tests"
  local tests
  tests=$(bazel query 'attr(tags, "\bgpu\b", tests(//...))' 2>/dev/null) ||
    die 1 "bazel query for the gpu tests failed"
  [[ -n "$tests" ]] || die 1 "no gpu-tagged tests found"
  log "building: ${tests//$'\n'/ } //benchmarks:gpu_mlp_benchmark"
  # shellcheck disable=SC2086
  bazel build $tests //benchmarks:gpu_mlp_benchmark >&2 || die 1 "bazel build failed"
  # Only ever delete a previous bundle, never an arbitrary folder given by mistake.
  if [[ -e "$out" && ! -f "$out/manifest.txt" ]]; then
    die 1 "$out exists and is not a bundle; give another folder"
  fi
  rm -rf "$out"
  mkdir -p "$out/bin" "$out/lib" "$out/lib/compat" || die 1 "cannot create $out"
  local bin_dir
  bin_dir=$(bazel info bazel-bin 2>/dev/null) || die 1 "bazel info failed"
  local t name originals=()
  for t in $tests //benchmarks:gpu_mlp_benchmark; do
    name=${t#//}; name=${name/://}
    cp "$bin_dir/$name" "$out/bin/" || die 1 "missing binary $bin_dir/$name"
    originals+=("$bin_dir/$name")
  done
  # Every library the binaries load here, except what the GPU machine provides (ldd on Bazel's
  # copies: their runpath, $ORIGIN/../_solib_k8, resolves only there).
  local lib path
  while read -r lib path; do
    is_system_lib "$lib" && continue
    case "$lib" in
      libstdc++.so*|libgcc_s.so*) cp -L "$path" "$out/lib/compat/" ;;
      *) cp -L "$path" "$out/lib/" ;;
    esac
  done < <(for b in "${originals[@]}"; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u)
  echo "$tests" | sed 's|^//||; s|:|/|; s|.*/||' > "$out/gpu_tests.txt"
  {
    echo "commit $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "cuda $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
    echo "glibc $(ldd --version | head -1 | awk '{print $NF}')"
  } > "$out/manifest.txt"
  log "checking that the copies resolve from $out/lib and start"
  verify_loads "$out" "$out/lib:/usr/local/cuda/lib64" || die 1 "bundle check failed"
  log "bundle ready: $out ($(du -sh "$out" | cut -f1)); carry it to the GPU machine"
}

# Checks that every bundled binary finds all its libraries with LD_LIBRARY_PATH=$2 and that the
# Debian-built ones come from the bundle, then that each binary starts.
verify_loads() {
  local dir=$1 path=$2 b missing
  for b in "$dir"/bin/*; do
    missing=$(LD_LIBRARY_PATH="$path" ldd "$b" 2>&1 | grep -E "not found|version .* not found")
    if [[ -n "$missing" ]]; then
      log "$(basename "$b") cannot load: $missing"
      return 1
    fi
    if LD_LIBRARY_PATH="$path" ldd "$b" | grep -E "lib(absl|tbb|openblas|gfortran)" | grep -vq "$dir/lib"; then
      log "$(basename "$b") loads a Debian library from outside the bundle"
      return 1
    fi
  done
  while read -r b; do
    LD_LIBRARY_PATH="$path" "$dir/bin/$b" --gtest_list_tests >/dev/null 2>&1 ||
      { log "$b does not start"; return 1; }
  done < "$dir/gpu_tests.txt"
  LD_LIBRARY_PATH="$path" "$dir/bin/gpu_mlp_benchmark" --help >/dev/null 2>&1
  [[ $? -le 1 ]] || { log "gpu_mlp_benchmark does not start"; return 1; }
  return 0
}

# Directories that hold the CUDA 13 libraries the bundle does not carry.
cuda_lib_dirs() {
  local d dirs=()
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64 \
           /usr/lib/x86_64-linux-gnu; do
    [[ -d "$d" ]] && dirs+=("$d")
  done
  # PyTorch's CUDA wheels (nvidia-cublas, nvidia-nccl-cu13, nvidia-cudnn-cu13, ...).
  local py
  for py in python3 /usr/bin/python3; do
    command -v "$py" >/dev/null || continue
    while read -r d; do [[ -d "$d" ]] && dirs+=("$d"); done < <("$py" - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
    for root in nvidia.__path__:
        for lib in sorted(glob.glob(os.path.join(root, "*", "lib"))) + [os.path.join(root, "cu13", "lib")]:
            print(lib)
except Exception:
    pass
PY
)
  done
  local IFS=:
  echo "${dirs[*]}"
}

check() {
  local dir="${1:-$repo/.gpu_bundle}"
  local start=$SECONDS
  # 1. The GPU and the driver.
  command -v nvidia-smi >/dev/null ||
    die 2 "no NVIDIA GPU / driver: nvidia-smi is not installed (this machine has no NVIDIA driver)"
  local smi
  smi=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1) ||
    die 2 "no NVIDIA GPU / driver: nvidia-smi failed: $smi"
  [[ -n "$smi" ]] || die 2 "no NVIDIA GPU / driver: nvidia-smi lists no GPU"
  log "GPU: $smi"
  # 2. The bundle.
  if [[ ! -d "$dir/bin" ]]; then
    die 2 "no bundle at $dir: run 'tools/gpu_check.sh --bundle' on a build machine with Bazel and carry .gpu_bundle here"
  fi
  log "bundle: $(tr '\n' ' ' < "$dir/manifest.txt")"
  local path
  path="$dir/lib:$(cuda_lib_dirs)"
  # Debian 12's libstdc++ only where the machine's own is older than what the binaries need.
  local sys_stdcxx
  sys_stdcxx=$(ldconfig -p 2>/dev/null | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')
  if [[ -z "$sys_stdcxx" ]] || ! grep -q GLIBCXX_3.4.30 "$sys_stdcxx" 2>/dev/null; then
    log "using the bundled libstdc++ (the machine's is missing or older)"
    path="$dir/lib/compat:$path"
  fi
  export LD_LIBRARY_PATH="$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  verify_loads "$dir" "$LD_LIBRARY_PATH" ||
    die 1 "the bundled binaries do not load here (see above): CUDA 13 cuBLAS/NCCL/cuDNN missing?"
  local results
  results=$(mktemp -d) || die 1 "mktemp failed"

  # 3. Every gpu test; a "no CUDA device" skip counts as a failure here, where a GPU is present
  #    (cases that need 2 GPUs may skip on a one-GPU machine). Time limits: 2 x 120 s of tests,
  #    150 s of benchmark, 90 s of PyTorch: under 8 minutes even when everything times out.
  local failed=0 t out
  while read -r t; do
    log "test $t"
    out="$results/$t.log"
    timeout 120 "$dir/bin/$t" --gtest_color=no >"$out" 2>&1
    local rc=$?
    # The summary: counts, and the name of each failed test.
    grep -E "^\[ +(PASSED|SKIPPED|FAILED) +\] [0-9]+ tests?|^\[  FAILED  \] [A-Za-z]" "$out" | sort -u >&2
    if [[ $rc -ne 0 ]]; then
      log "FAILED: $t (exit $rc; full log $out)"; failed=1
    elif grep -q "no CUDA device" "$out"; then
      log "FAILED: $t skipped tests on a GPU machine"; failed=1
    fi
  done < "$dir/gpu_tests.txt"

  # 4. The benchmark: ~20 s of step cases, the GEMM limit, 4 trainer epochs, ~20 s of PyTorch.
  log "benchmark (about 60 s)"
  timeout 150 "$dir/bin/gpu_mlp_benchmark" --seconds_per_case=5 --batches=64,1024 --workers=1,4 \
    >"$results/bench.txt" 2>&1 || { log "benchmark failed (exit $?)"; failed=1; }
  grep -v '^RESULT' "$results/bench.txt" >&2
  if python3 -c 'import torch' 2>/dev/null; then
    PYTHONUNBUFFERED=1 timeout 90 python3 "$repo/benchmarks/gpu_pytorch_mlp.py" \
      --batches 64,1024 --seconds 5 >"$results/torch.txt" 2>&1 ||
      log "PyTorch comparison failed (exit $?)"
    grep -v '^RESULT' "$results/torch.txt" >&2
  else
    log "no PyTorch here: the comparison column stays empty"
    : >"$results/torch.txt"
  fi

  # 5. The table, last.
  cat "$results/bench.txt" "$results/torch.txt" | sed -n 's/^RESULT //p' >"$results/results.jsonl"
  python3 - "$results/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def get(kind, batch, workers=None):
    for r in rows:
        if r["kind"] == kind and r["batch"] == batch and (workers is None or r["workers"] == workers):
            return r["examples_per_s"]
    return None
def fmt(v):
    return "-" if v is None else "{:,.0f}".format(v)
print()
print("MLP 784-256-256-10 train step on GPU 0, examples/s")
print("(step: batches resident on the GPU, Hogwild on the device; train: whole trainer, 1 epoch;")
print(" torch eager: loss.item() every step, as our step reads the loss back)")
print("{:>6} {:>7} {:>12} {:>12} {:>12} {:>18}".format(
    "batch", "workers", "step", "train", "torch eager", "cuBLAS GEMM limit"))
for batch in (64, 1024):
    for workers in (1, 4):
        torch = get("torch_eager_sync", batch) if workers == 1 else None
        gemm = get("gemm", batch) if workers == 1 else None
        print("{:>6} {:>7} {:>12} {:>12} {:>12} {:>18}".format(
            batch, workers, fmt(get("step", batch, workers)), fmt(get("train", batch, workers)),
            fmt(torch), fmt(gemm)))
s64, t64 = get("step", 64, 1), get("torch_eager_sync", 64)
s1k, g1k = get("step", 1024, 1), get("gemm", 1024)
if s64 and t64:
    print("target batch 64, step >= PyTorch eager: {:.2f}x -> {}".format(
        s64 / t64, "MET" if s64 >= t64 else "MISSED"))
if s1k and g1k:
    print("target batch 1024, step within 2x of the GEMM limit: {:.2f} of it -> {}".format(
        s1k / g1k, "MET" if 2 * s1k >= g1k else "MISSED"))
PY
  log "done in $((SECONDS - start)) s; logs in $results"
  [[ $failed -eq 0 ]] && echo "gpu_check: all gpu tests passed" || echo "gpu_check: FAILURES (see above)"
  return $failed
}

case "${1:-}" in
  --bundle) shift; bundle "$@" ;;
  -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' ;;
  *) check "$@" ;;
esac
