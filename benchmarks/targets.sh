#!/usr/bin/env bash
# The performance targets table in one run: every figure side by side with its reference, sides
# alternating, medians, spreads and ratios, the quiet probe before and after each block (BUSY
# when the machine was not idle), printed as a markdown table (benchmarks/README.md, "Targets in
# one command").
#
#   bazel build //benchmarks:targets && benchmarks/targets.sh            # ~10 min, idle 2 cores
#   benchmarks/targets.sh --reps=2 --tta_reps=1 --blocks=gemm,mlp        # a quick check
#   (or: bazel run //benchmarks:targets -- --reps=5)
#
# Options (benchmarks/targets.py): --reps=N (gemm, mlp, cnn blocks; default 9), --tta_reps=N
# (default 5), --tta_epochs=N (default 3), --blocks=gemm,mlp,cnn,tta. Needs tools/setup.sh
# --bench (python3-torch, libopenblas0-serial) and the Fashion-MNIST package.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# The built binaries: the runfiles under `bazel run`, else bazel-bin of the workspace.
if [[ -n "${RUNFILES_DIR:-}" && -d "$RUNFILES_DIR/hogwild" ]]; then
  bin="$RUNFILES_DIR/hogwild"
elif [[ -d "$0.runfiles/hogwild" ]]; then
  bin="$0.runfiles/hogwild"
else
  bin="$here/../bazel-bin"
fi
exec /usr/bin/python3 "$here/targets.py" --bin="$bin" "$@"
