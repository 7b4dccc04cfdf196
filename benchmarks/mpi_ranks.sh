#!/bin/bash
# Examples/s and bytes per step of the trainer across processes, for 1, 2 and 4 ranks x 1 worker
# in both modes, on this machine (mpirun over TCP on loopback; more ranks than cores is
# oversubscribed, and reported as such by `uptime` next to the numbers).
#
#   bazel build //trainer/cli:train && cp bazel-bin/trainer/cli/train /tmp/train_async
#   bazel build --config=sync //trainer/cli:train && cp bazel-bin/trainer/cli/train /tmp/train_sync
#   benchmarks/mpi_ranks.sh /tmp/train_async /tmp/train_sync [train flags...]
#
# Default flags: the default mlp, 20,000 training images, 2 epochs, no periodic evaluation.
# Prints one markdown row per run: mode, ranks, wall time, examples/s of the job (all ranks'
# examples / rank 0's training time), rank 0's exchanges, bytes moved per exchange and per
# local step (async exchanges every --exchange_every local steps), final test accuracy.
set -euo pipefail
async_bin="$1"
sync_bin="$2"
shift 2
flags=(--workers=1 --train_examples=20000 --epochs=2 --eval_every=0 "$@")
echo "load before: $(uptime)"
echo "| mode | ranks | wall time (s) | examples/s (job) | exchanges (rank 0) | bytes/exchange | bytes/local step | test accuracy |"
echo "|---|---|---|---|---|---|---|---|"
for mode in async sync; do
  bin="$async_bin"
  [[ $mode == sync ]] && bin="$sync_bin"
  for ranks in 1 2 4; do
    out=$(mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp -np "$ranks" "$bin" \
      "${flags[@]}" 2>&1 | tr '\r' '\n')
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
    echo "| $mode | $ranks | $wall | $rate | $exchanges | $per_exchange | $per_step | $accuracy |"
  done
done
echo "load after: $(uptime)"
