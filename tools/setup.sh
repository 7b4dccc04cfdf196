#!/usr/bin/env bash
# Installs every Debian package that building, testing and the default training job need.
# Idempotent: packages already installed are skipped and apt is not touched at all when nothing
# is missing. Usage: tools/setup.sh [--bench]   (--bench adds the benchmark extras: matplotlib
# for the figures and PyTorch for the side-by-side comparison).
set -euo pipefail

packages=(
  bazel-bootstrap          # Bazel 4.2.3, the only Bazel reachable offline (WORKSPACE mode)
  g++ clang libclang-rt-14-dev  # toolchain; clang's libFuzzer for the reader fuzzers
  libabsl-dev              # flags, Status, StrFormat, Mutex, time
  libtbb-dev               # input pipeline, concurrent queue
  libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev               # gzip-compressed IDX files, crc32 of checkpoints
  libopenblas-pthread-dev  # GEMM; thread-safe build, pinned to 1 thread per call by the backend
  pkg-config
  dataset-fashion-mnist    # the default training data (/usr/share/datasets/fashion-mnist)
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(python3-matplotlib python3-numpy python3-torch libopenblas0-serial)
fi

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"
