#!/bin/bash
# Faults and bad input in a job of several processes, under mpirun over TCP:
# - a rank whose run fails (an injected worker error at its step 1 or 40, async and sync) ends
#   the whole job within 15 s, non-zero, with a message naming the rank and its error;
# - a rank killed (SIGKILL) at its first step or 2 s later in a long run, async and sync, ends
#   the whole job within 15 s of the kill, non-zero, mpirun naming the killed rank;
# - ranks started with different flags (`train`, MPMD: --lr differs) fail before training, with
#   one error line naming the rank and both values;
# - a flag every rank refuses is refused before the data is read, once, without MPI_Abort, and
#   the progress line under mpirun has no carriage return in redirected output;
# - sync with more ranks than examples in the global batch fails, naming both numbers;
# - an MPI call that fails is an error naming the call, file:line, the rank and MPI's reason.
#
# Usage (from tests/BUILD): mpi_fault_test.sh <path of //tests:mpi_train> <path of //trainer:train>
set -u
probe="$1"
train="$2"
source "$(dirname "$0")/mpi_common.sh"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
# descendants <pid>: every process below <pid>, one per line.
descendants() {
  local child
  for child in $(pgrep -P "$1"); do
    echo "$child"
    descendants "$child"
  done
}

long=(--workers=1 --train_examples=20000 --hidden=1024 --epochs=100000)

for mode in async sync; do
  for step in 1 40; do
    label="$mode: rank 1 fails at step $step"
    start=$(date +%s)
    mpi_run 3 "$probe" --mode="$mode" "${long[@]}" --fail_rank=1 --fail_step="$step" \
      >"$tmp/fail.log" 2>&1
    rc=$?
    elapsed=$(($(date +%s) - start))
    check "$label: non-zero exit ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
    check "$label: ended in ${elapsed}s <= 15s" test "$elapsed" -le 15
    check "$label: the message names rank 1 and its error" \
      grep -q "rank 1.*injected failure at step $step" "$tmp/fail.log"
  done
  # Killed once training runs, by construction: the test waits for rank 1's first step (the
  # probe's --started_dir marker) before it counts the delay, so the kill neither lands in a job
  # still starting on a busy machine nor after its end, whatever the load or the machine's speed
  # (100,000 epochs, which the kill always cuts short).
  for delay in 0 2; do
    label="$mode: rank 1 killed ${delay}s after its first step"
    started="$tmp/started_${mode}_$delay"
    mkdir -p "$started"
    mpi_run 2 "$probe" --mode="$mode" "${long[@]}" --started_dir="$started" >"$tmp/kill.log" 2>&1 &
    job=$!
    for _ in $(seq 1 600); do
      [[ -e $started/rank1 ]] && break
      kill -0 "$job" 2>/dev/null || break
      sleep 0.1
    done
    check "$label: rank 1 trained a step" test -e "$started/rank1"
    sleep "$delay"
    # The ranks are descendants of the job (subshell -> timeout -> mpirun -> ranks); find rank
    # 1 by its environment.
    victim=""
    for pid in $(descendants "$job"); do
      if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
        victim=$pid
      fi
    done
    check "$label: rank 1 found running" test -n "$victim"
    # What the job's processes were doing at the kill, for a failure's diagnosis.
    ps -o pid,stat,etimes,args -p "$(descendants "$job" | paste -sd, -)" >"$tmp/kill.ps" 2>&1
    [[ -n $victim ]] && kill -KILL "$victim"
    start=$(date +%s)
    wait "$job"
    rc=$?
    elapsed=$(($(date +%s) - start))
    check "$label: non-zero exit ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
    check "$label: ended ${elapsed}s after the kill, <= 15s" test "$elapsed" -le 15
    check "$label: mpirun names rank 1" grep -q "rank 1" "$tmp/kill.log"
    if [[ $rc -eq 0 ]] || ! grep -q "rank 1" "$tmp/kill.log"; then
      cat "$tmp/kill.ps" "$tmp/kill.log"
    fi
  done
done

# Different flags on the two ranks: mpirun's MPMD form gives each its own command line.
empty="$tmp/empty_data"
mkdir -p "$empty"
timeout 60 mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp \
  -np 1 "$train" --data_dir="$empty" --lr=0.1 : -np 1 "$train" --data_dir="$empty" --lr=0.05 \
  >"$tmp/flags.out" 2>"$tmp/flags.err"
rc=$?
cat "$tmp/flags.err"
check "different --lr: non-zero exit ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "different --lr: one error line" test "$(grep -c '^error:' "$tmp/flags.err")" -eq 1
check "different --lr: names rank 1 and both values" \
  grep -q "'--lr=0.05' on rank 1 but '--lr=0.1' on rank 0" "$tmp/flags.err"

# The flag errors found on argv (trainer/cli/argv_flags.h: an unknown flag, a value of the wrong
# type) come before MPI starts, on every rank alike: rank 0 prints them and the other ranks end
# with the same status silently. A rank started with another command line (MPMD) says its own.
for bad in --no_such_flag=1 --epochs=abc; do
  mpi_run 2 "$train" --data_dir="$empty" "$bad" >"$tmp/bad.out" 2>"$tmp/bad.err"
  rc=$?
  check "$bad across 2 ranks: non-zero exit ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
  name=${bad#--}
  name=${name%%=*}
  check "$bad across 2 ranks: the error once, naming the flag" \
    test "$(grep -c "^error:.*--$name" "$tmp/bad.err")" -eq 1 \
    -a "$(grep -ci '^error:' "$tmp/bad.err")" -eq 1
  grep -i '^error:' "$tmp/bad.err"
done
timeout 60 mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp \
  -np 1 "$train" --data_dir="$empty" : -np 1 "$train" --data_dir="$empty" --no_such_flag=1 \
  >"$tmp/mpmd.out" 2>"$tmp/mpmd.err"
rc=$?
check "a bad flag on rank 1 alone (MPMD): non-zero exit ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "a bad flag on rank 1 alone (MPMD): rank 1 says it" \
  grep -q "^error: unknown flag --no_such_flag" "$tmp/mpmd.err"

# A flag every rank refuses (an optimizer not supported across processes) is refused before any
# data is read: with an empty --data_dir a later refusal would name the missing files instead.
# One line from rank 0, no MPI_Abort report.
mpi_run 2 "$train" --data_dir="$empty" --workers=1 --optimizer=adam >"$tmp/adam.out" \
  2>"$tmp/adam.err"
rc=$?
cat "$tmp/adam.err"
check "--optimizer=adam across ranks: non-zero exit ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "--optimizer=adam across ranks: one error line, naming the flag, before the data" \
  test "$(grep -c '^error: --optimizer=adam is not supported across processes' "$tmp/adam.err")" \
  -eq 1 -a "$(grep -c '^error:' "$tmp/adam.err")" -eq 1
check "--optimizer=adam across ranks: no MPI_Abort report" \
  bash -c "! grep -q MPI_ABORT '$tmp/adam.out' '$tmp/adam.err'"

# Under mpirun a rank's stdout is Open MPI's pseudo-terminal even when mpirun's output goes to a
# file: the progress line must not rewrite itself with carriage returns there.
if [[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]]; then
  mpi_run 2 "$train" --workers=1 --epochs=1 --train_examples=2000 >"$tmp/progress.out" 2>&1
  check "progress under mpirun, redirected: trained ($?)" grep -q "^epoch 1.00/1" "$tmp/progress.out"
  check "the banner counts 2 processes x 1 worker (singular)" \
    grep -q "^hogwild: async mode, 2 processes x 1 worker on cpu," "$tmp/progress.out"
  check "progress under mpirun, redirected: no carriage return" \
    bash -c "! grep -q $'\r' '$tmp/progress.out'"
else
  echo "skip: progress under mpirun (Fashion-MNIST is not installed: tools/setup.sh)"
fi

# An MPI call that fails becomes a status naming the call, file:line and rank (mpi/mpi_status.h).
mpi_run 2 "$probe" --bad_mpi_call_rank=1 >"$tmp/mpi_error.log" 2>&1
rc=$?
check "a failing MPI call: non-zero exit ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "a failing MPI call: the error names the call, file:line, rank and MPI's reason" \
  grep -Eq "MPI_Bcast\(&value, 1, MPI_INT, num_ranks, MPI_COMM_WORLD\) failed at tests/mpi_train_main.cc:[0-9]+ on rank 1: MPI_ERR_ROOT" \
  "$tmp/mpi_error.log"
grep "failed at" "$tmp/mpi_error.log"

# Sync: 3 ranks cannot split a global batch of 2.
mpi_run 3 "$probe" --mode=sync --batch_size=2 >"$tmp/batch.log" 2>&1
rc=$?
check "sync, 3 ranks, batch 2: non-zero exit ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "sync, 3 ranks, batch 2: names the batch and the ranks" \
  grep -q "batch_size=2 is smaller than the 3 ranks" "$tmp/batch.log"
# Refused by every rank together before training: said once, no MPI_Abort report.
check "sync, 3 ranks, batch 2: one error line" test "$(grep -c '^error:' "$tmp/batch.log")" -eq 1
check "sync, 3 ranks, batch 2: no MPI_Abort report" bash -c "! grep -q MPI_ABORT '$tmp/batch.log'"

[[ $failures -eq 0 ]] || { echo "$failures failure(s)"; exit 1; }
echo "all fault cases passed"
