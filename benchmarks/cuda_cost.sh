#!/usr/bin/env bash
# What a CPU run of `train` pays for the CUDA libraries: two builds of //trainer:train side by
# side (e.g. before and after issue 11), interleaved, repeated; prints medians.
#
#   benchmarks/cuda_cost.sh BEFORE_TRAIN AFTER_TRAIN [--reps=3] [--help_reps=21]
#
# For each binary:
#   help     `train --help`: wall time of the whole process (--help_reps runs per rep), peak RSS
#   640      `train --train_examples=640 --epochs=1 --devices=cpu`: wall time, peak RSS
#   default  `train --devices=cpu` (8 epochs of Fashion-MNIST, one worker per core): same
# Every rep runs each measurement for both binaries back to back, the order alternating between
# reps, so a change of machine load hits both alike. Peak RSS is /usr/bin/time's maximum
# resident set size (tools/setup.sh --bench installs `time`). The CUDA libraries each binary
# would map are counted with ldd.
set -euo pipefail

reps=3; help_reps=21
[[ $# -ge 2 ]] || { sed -n '2,15p' "$0" >&2; exit 2; }
bins=("$1" "$2"); names=(before after); shift 2
for arg in "$@"; do
  case "$arg" in
    --reps=*) reps="${arg#*=}" ;;
    --help_reps=*) help_reps="${arg#*=}" ;;
    *) echo "unknown argument $arg; see the header of $0" >&2; exit 2 ;;
  esac
done
for b in "${bins[@]}"; do [[ -x "$b" ]] || { echo "not an executable: $b" >&2; exit 2; }; done
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time: tools/setup.sh --bench" >&2; exit 2; }

work="$(mktemp -d /tmp/hogwild_cuda_cost.XXXXXX)"
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# run <index> <label> <args...>: appends "<seconds> <max RSS KiB>" to $work/<name>.<label>.
run() {
  local i=$1 label=$2
  shift 2
  /usr/bin/time -f '%e %M' -o "$work/time.txt" "${bins[$i]}" "$@" >/dev/null 2>"$work/err.txt" || {
    echo "${names[$i]} $label failed:" >&2
    cat "$work/err.txt" >&2
    exit 1
  }
  cat "$work/time.txt" >>"$work/${names[$i]}.$label"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "uptime at start: $(uptime)"
# shellcheck source=benchmarks/quiet_probe.sh
source "$(dirname "$0")/quiet_probe.sh"
quiet_probe "before" || true
for i in 0 1; do
  echo "${names[$i]}: ${bins[$i]} ($(ldd "${bins[$i]}" | grep -cE 'lib(cudart|cublas|cublasLt|cudnn|nccl)\.so') CUDA libraries linked)"
done

for ((r = 0; r < reps; ++r)); do
  order=(0 1)
  ((r % 2)) && order=(1 0)
  for i in "${order[@]}"; do
    for ((k = 0; k < help_reps; ++k)); do
      start=$(date +%s%N)
      "${bins[$i]}" --help >/dev/null
      echo "$((($(date +%s%N) - start) / 1000)) " >>"$work/${names[$i]}.help_us"
    done
    run "$i" help_rss --help
    run "$i" 640 --train_examples=640 --epochs=1 --devices=cpu
    run "$i" default --devices=cpu
  done
  echo "rep $((r + 1))/$reps done; uptime: $(uptime)"
done

col() { awk -v c="$2" '{print $c}' "$work/$1"; }
printf '\n| measurement (median of %d reps) | before | after | after / before |\n|---|---:|---:|---:|\n' "$reps"
row() {  # row <title> <label> <column> <scale> <format>
  local b a
  b=$(col "before.$2" "$3" | median)
  a=$(col "after.$2" "$3" | median)
  printf "| %s | $5 | $5 | %.2f |\n" "$1" "$(awk -v x="$b" -v s="$4" 'BEGIN {print x * s}')" \
    "$(awk -v x="$a" -v s="$4" 'BEGIN {print x * s}')" "$(awk -v x="$a" -v y="$b" 'BEGIN {print x / y}')"
}
row "\`train --help\`: wall time (ms; median of all $((reps * help_reps)) runs)" help_us 1 0.001 "%.1f"
row "\`train --help\`: peak RSS (MiB)" help_rss 2 "$(awk 'BEGIN {print 1 / 1024}')" "%.1f"
row "640 examples, 1 epoch: wall time (s)" 640 1 1 "%.2f"
row "640 examples, 1 epoch: peak RSS (MiB)" 640 2 "$(awk 'BEGIN {print 1 / 1024}')" "%.1f"
row "default run (8 epochs): wall time (s)" default 1 1 "%.2f"
row "default run (8 epochs): peak RSS (MiB)" default 2 "$(awk 'BEGIN {print 1 / 1024}')" "%.1f"
echo
echo "uptime at end: $(uptime)"
quiet_probe "after" || true
