#!/usr/bin/env bash
# One of the study findings of benchmarks/README.md ("Findings"), by one command:
#
#   bazel run //benchmarks:finding -- NAME [OUT_DIR]
#
# NAME is backup, momentum, staleness_lr, ssp, diloco, async_delay or async_local_sgd. Runs the study runner (//benchmarks:study) on
# the finding's flag file, benchmarks/findings/NAME.flags (a simulated grid with every seed),
# into OUT_DIR (default /tmp/hogwild_finding_NAME; resumable: finished runs are kept), then
# draws OUT_DIR/study.png (accuracy against simulated time and examples, bands over seeds) and
# OUT_DIR/finding_NAME.png with the table OUT_DIR/finding_NAME.md (benchmarks/plot_findings.py).
# Extra flags after OUT_DIR go to the study runner (e.g. --seeds=1 for a quick look).
set -euo pipefail

usage="usage: bazel run //benchmarks:finding -- backup|momentum|staleness_lr|ssp|diloco|async_delay|async_local_sgd [OUT_DIR] [study flags]"
name="${1:-}"
case "$name" in
  backup | momentum | staleness_lr | ssp | diloco | async_delay | async_local_sgd) ;;
  *) echo "error: unknown finding '$name'; $usage" >&2; exit 2 ;;
esac
shift
out_dir="/tmp/hogwild_finding_$name"
if [[ $# -gt 0 && "$1" != --* ]]; then
  out_dir="$1"
  shift
fi
# `bazel run` starts in the runfiles: a relative OUT_DIR is the caller's.
if [[ "$out_dir" != /* ]]; then out_dir="${BUILD_WORKING_DIRECTORY:-$PWD}/$out_dir"; fi

# Inputs: in the runfiles (the working directory under `bazel run`, or next to the binary when
# it is started as bazel-bin/benchmarks/finding), else the source tree and its bazel-bin.
here="$(cd "$(dirname "$0")" && pwd)"
if [[ -d "$0.runfiles/hogwild" ]]; then cd "$0.runfiles/hogwild"; fi
pick() {
  for c in "$@"; do
    [[ -e "$c" ]] && { echo "$c"; return; }
  done
  echo "error: cannot find $1 (bazel build //benchmarks:finding)" >&2
  exit 1
}
study="$(pick benchmarks/sync_vs_async "$here/../bazel-bin/benchmarks/sync_vs_async")"
flags="$(pick "benchmarks/findings/$name.flags" "$here/findings/$name.flags")"
plots="$(dirname "$(pick benchmarks/plot_findings.py "$here/plot_findings.py")")"
target="$(sed -n 's/^--target_accuracy=//p' "$flags")"
for arg in "$@"; do
  case "$arg" in
    --out_dir=*)
      echo "error: give the output directory as OUT_DIR (the second argument), not --out_dir; $usage" >&2
      exit 2 ;;
    --target_accuracy=*) target="${arg#*=}" ;;  # the study and the figures use the same target
  esac
done

"$study" --flagfile="$flags" --out_dir="$out_dir" --plot=false "$@"
/usr/bin/python3 "$plots/plot_study.py" --out_dir "$out_dir" --target "$target"
/usr/bin/python3 "$plots/plot_findings.py" --finding "$name" --out_dir "$out_dir" --target "$target"
