#!/bin/bash
# `train` and the CUDA libraries (issue 11): a CPU run loads none of them, in every build; GPU
# devices go to train_gpu (which does load them) in a build with CUDA, and get one line saying
# "built without CUDA" and how to build with it in a build without. The dynamic loader's own
# trace (LD_DEBUG=files, inherited across the exec) says which libraries a run really loaded.
#
# Usage (from tests/BUILD): cli_devices_test.sh <path of //trainer:train> cuda|cpu
set -u

train="$1"
build="$2"  # cuda: built with CUDA enabled (train_gpu beside train); cpu: without
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
empty_dir="$tmp/empty_data_dir"
mkdir -p "$empty_dir"
cuda_libs='lib(cudart|cublas|cublasLt|cudnn|nccl)\.so'
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Linked: no CUDA library among everything the loader would map for train.
if ldd "$train" | grep -Eq "$cuda_libs"; then
  fail "train links CUDA libraries: $(ldd "$train" | grep -E "$cuda_libs" | tr -s ' \t\n' ' ')"
else
  echo "ok:   ldd train: no CUDA library"
fi

# Loaded: a CPU run (stopped at the missing data, after the device choice) loads none either.
LD_DEBUG=files "$train" --devices=cpu --data_dir="$empty_dir" >/dev/null 2>"$tmp/cpu.txt"
if grep -Eq "file=$cuda_libs" "$tmp/cpu.txt"; then
  fail "train --devices=cpu loaded a CUDA library: $(grep -Eo "file=$cuda_libs[^ ]*" "$tmp/cpu.txt" | sort -u | tr '\n' ' ')"
else
  echo "ok:   train --devices=cpu loads no CUDA library"
fi

# GPU devices. The error line is the last line of stderr (LD_DEBUG writes there too).
LD_DEBUG=files "$train" --devices=gpu --data_dir="$empty_dir" >/dev/null 2>"$tmp/gpu.txt"
rc=$?
error=$(grep '^error:' "$tmp/gpu.txt")
if [[ $rc -eq 0 || $(grep -c '^error:' "$tmp/gpu.txt") -ne 1 ]]; then
  fail "train --devices=gpu --data_dir=<empty>: exit $rc, want non-zero and one error line; got: $error"
elif [[ $build == cuda ]]; then
  gpu_binary="$(dirname "$train")/train_gpu"
  if ! ldd "$gpu_binary" | grep -q libcudart; then
    fail "train_gpu ($gpu_binary) does not link libcudart"
  elif ! grep -Eq "file=libcudart\.so" "$tmp/gpu.txt"; then
    fail "train --devices=gpu did not hand the run to train_gpu (no libcudart loaded); error: $error"
  elif [[ $error == *"built without CUDA"* ]]; then
    fail "train --devices=gpu in a build with CUDA says: $error"
  else
    echo "ok:   train --devices=gpu runs train_gpu (libcudart loaded): $error"
  fi
else
  if grep -Eq "file=$cuda_libs" "$tmp/gpu.txt"; then
    fail "train --devices=gpu loaded a CUDA library in a build without CUDA"
  elif [[ $error != *"--devices=gpu: this train was built without CUDA"* ||
          $error != *"--config=cuda on a machine with the CUDA toolkit"* ]]; then
    fail "train --devices=gpu in a build without CUDA: want 'built without CUDA' and how to build with it; got: $error"
  else
    echo "ok:   train --devices=gpu (no CUDA): $error"
  fi
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed ($build build)"
