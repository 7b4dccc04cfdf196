#!/bin/bash
# Examples/s and bytes per step of the trainer across processes, for 1, 2 and 4 ranks x 1 worker
# in both modes, on this machine (mpirun over TCP on loopback; more ranks than cores is
# oversubscribed, and reported as such by `uptime` next to the numbers).
#
#   bazel build //trainer/cli:train && cp bazel-bin/trainer/cli/train /tmp/train_async
#   bazel build --config=sync //trainer/cli:train && cp bazel-bin/trainer/cli/train /tmp/train_sync
#   benchmarks/mpi_ranks.sh /tmp/train_async /tmp/train_sync [train flags...]
#
#   benchmarks/mpi_ranks.sh --time_to=0.85 /tmp/train_async /tmp/train_sync [train flags...]
#
# Default flags: the default mlp, 20,000 training images, 2 epochs, no periodic evaluation.
# Prints one markdown row per run: mode, ranks, wall time, examples/s of the job (all ranks'
# examples / rank 0's training time), rank 0's exchanges, bytes moved per exchange and per
# local step (async exchanges every --exchange_every local steps), final test accuracy.
# With --time_to=A: the full training set, 4 epochs, an evaluation (rank 0, on the 10,000 test
# images) every quarter epoch, and one more column: the training time (the convergence log's
# wall_time_s) of the first evaluation at test accuracy >= A, or "not reached".
set -euo pipefail
target=""
if [[ $1 == --time_to=* ]]; then
  target="${1#--time_to=}"
  shift
fi
async_bin="$1"
sync_bin="$2"
shift 2
flags=(--workers=1 --train_examples=20000 --epochs=2 --eval_every=0 "$@")
logdir=$(mktemp -d)
if [[ -n $target ]]; then
  flags=(--workers=1 --epochs=4 --eval_every=0.25epoch "$@")
fi
echo "load before: $(uptime)"
if [[ -n $target ]]; then
  echo "| mode | ranks | wall time (s) | examples/s (job) | exchanges (rank 0) | bytes/exchange | bytes/local step | test accuracy | time to $target (s) |"
  echo "|---|---|---|---|---|---|---|---|---|"
else
  echo "| mode | ranks | wall time (s) | examples/s (job) | exchanges (rank 0) | bytes/exchange | bytes/local step | test accuracy |"
  echo "|---|---|---|---|---|---|---|---|"
fi
for mode in async sync; do
  bin="$async_bin"
  [[ $mode == sync ]] && bin="$sync_bin"
  for ranks in 1 2 4; do
    log=()
    [[ -n $target ]] && log=(--log="$logdir/$mode$ranks.csv")
    out=$(mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp -np "$ranks" "$bin" \
      "${flags[@]}" "${log[@]}" 2>&1 | tr '\r' '\n')
    wall=$(sed -n 's/.*wall time \([0-9.]*\) s.*/\1/p' <<<"$out" | tail -n 1)
    steps=$(sed -n 's/.* \([0-9]*\) steps .*/\1/p' <<<"$out" | tail -n 1)
    accuracy=$(sed -n 's/^final test accuracy \([0-9.]*%\).*/\1/p' <<<"$out" | tail -n 1)
    if [[ $ranks -eq 1 ]]; then
      examples=$(sed -n 's/.* | \([0-9]*\) examples, .*/\1/p' <<<"$out" | tail -n 1)
      exchanges=0
      per_exchange=0
    else
      examples=$(sed -n 's/^ranks [0-9]* | \([0-9]*\) examples on all ranks.*/\1/p' <<<"$out")
      exchanges=$(sed -n 's/.*this rank: \([0-9]*\) exchanges.*/\1/p' <<<"$out")
      per_exchange=$(sed -n 's/.*(\([0-9]*\) bytes\/exchange).*/\1/p' <<<"$out")
    fi
    per_step=$(awk -v e="$exchanges" -v b="$per_exchange" -v s="$steps" \
      'BEGIN { printf "%.0f", (s > 0 ? e * b / s : 0) }')
    rate=$(awk -v n="$examples" -v t="$wall" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')
    row="| $mode | $ranks | $wall | $rate | $exchanges | $per_exchange | $per_step | $accuracy |"
    if [[ -n $target ]]; then
      # The first eval row at or above the target, by the header's column names.
      reached=$(awk -F, -v a="$target" 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
        $c["kind"] == "eval" && $c["test_accuracy"] >= a { printf "%.1f", $c["wall_time_s"]; exit }' \
        "$logdir/$mode$ranks.csv")
      row="$row ${reached:-not reached} |"
    fi
    echo "$row"
  done
done
echo "load after: $(uptime)"
rm -rf "$logdir"
