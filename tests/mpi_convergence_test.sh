#!/bin/bash
# Both modes across processes on real data, under mpirun over TCP: the first 10,000 Fashion-MNIST
# images, >= 80% test accuracy on the 10,000 test images in
#   async 2 ranks x 2 workers and 3 ranks x 1 worker (Hogwild per process, parameters sharded
#         in MPI-3 windows, exchange every 8 local steps), every rank ending with the same
#         parameters, the summary reporting remote staleness and exchanges, and rank 0's
#         convergence log its remote_staleness columns;
#   sync  2 ranks x 2 workers.
# Prints SKIPPED with the install command (and passes) where the dataset is not installed.
#
# Usage (from tests/BUILD): mpi_convergence_test.sh <path of //tests:mpi_train>
set -u
probe="$1"
source "$(dirname "$0")/mpi_common.sh"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
if [[ ! -e /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz &&
  ! -e /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte ]]; then
  echo "SKIPPED: Fashion-MNIST is not installed (sudo apt-get install dataset-fashion-mnist)"
  exit 0
fi
common=(--data=fashion_mnist --train_examples=10000 --hidden=128 --epochs=5)

run_case() {  # <label> <ranks> <flags...>
  local label=$1 ranks=$2
  shift 2
  local log="$tmp/${label//[^A-Za-z0-9]/_}.log"
  mpi_run "$ranks" "$probe" "${common[@]}" "$@" >"$log" 2>&1
  check "$label: exit 0" test $? -eq 0
  local accuracy
  accuracy=$(sed -n 's/^accuracy //p' "$log")
  echo "      $label: test accuracy ${accuracy:-none}"
  check "$label: accuracy >= 0.80" awk -v a="${accuracy:-0}" 'BEGIN { exit !(a >= 0.80) }'
  check "$label: every rank ends with the same parameters" \
    test "$(sed -n 's/^rank [0-9]* examples [0-9]* params //p' "$log" | sort -u | wc -l)" -eq 1
  check "$label: $ranks ranks reported" grep -q "^rank $((ranks - 1)) examples" "$log"
  grep "^ranks" "$log"
  [[ $failures -eq 0 ]] || cat "$log"
}

# Async gets 10 epochs: at 5, 3 ranks on 2 busy cores ended at 78% once in CI (83-84% on a
# quiet machine; fewer exchanges under contention), at 10 they end at 84.5-85.5% with two busy
# loops running beside them.
run_case "async 2x2" 2 --mode=async --workers=2 --batch_size=16 --lr=0.03 --epochs=10 \
  --log="$tmp/async.csv"
check "async 2x2: remote staleness and exchanges in the summary" \
  grep -Eq "[1-9][0-9]* exchanges.*remote staleness mean [0-9.]+, max [0-9]+" "$tmp/async_2x2.log"
# The remote staleness columns (14 and 15): set on the train rows whose window made an exchange (every 8
# local steps, so most rows of 10 steps), and on the final eval row; empty on none of the
# others in one process (convergence_log_test checks the header and the empty columns).
check "async 2x2: the log has the remote staleness columns" \
  grep -q "delay_s,remote_staleness_mean,remote_staleness_max," "$tmp/async.csv"
check "async 2x2: train rows with remote staleness" \
  awk -F, '$2 == "train" && $14 != "" && $15 != "" { n++ } END { exit !(n >= 10) }' "$tmp/async.csv"
check "async 2x2: the eval row has remote staleness" \
  awk -F, '$2 == "eval" && $14 != "" { n++ } END { exit !(n >= 1) }' "$tmp/async.csv"
run_case "async 3x1" 3 --mode=async --workers=1 --batch_size=16 --lr=0.03 --epochs=10
run_case "sync 2x2" 2 --mode=sync --workers=2 --batch_size=32 --lr=0.1

[[ $failures -eq 0 ]] || { echo "$failures failure(s)"; exit 1; }
echo "all convergence cases passed"
