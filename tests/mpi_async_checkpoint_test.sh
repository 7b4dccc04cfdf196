#!/bin/bash
# Checkpoints of an async job of several processes (mpi/sharded_hogwild.h, "Checkpoints of the
# job"), under mpirun over TCP. Async progress differs between runs, so resume is not bitwise;
# what is tested is what the cut promises:
# - an orderly stop that only rank 1 asks for makes every rank stop after one agreed cut, rank 0
#   writes the job's checkpoint, and its parameters are bitwise those every rank ends with
#   (the cut left no update in flight); it holds every worker's position (R·W) and momentum;
# - resumed, every rank continues where it stopped: per rank, the examples trained before the
#   stop plus after the resume are exactly the uninterrupted run's (none twice, none skipped),
#   and every rank ends with the same parameters;
# - the final checkpoint of a finished run holds exactly the parameters every rank ends with;
# - resuming with another rank count is refused, one error line naming both counts;
# - SIGTERM to rank 1 alone: every rank stops, the checkpoint is written, every rank exits 143.
#
# Usage (from tests/BUILD): mpi_async_checkpoint_test.sh <path of //tests:mpi_train>
set -u
probe="$1"
source "$(dirname "$0")/mpi_common.sh"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
# The job's decision takes milliseconds (a round of MPI over TCP, polled at most every ms, on a
# loaded machine), many steps of this small model: 16,000 steps per worker (about a second) so
# that the stop lands mid-run, not after the data.
common=(--mode=async --workers=2 --train_examples=1000 --batch_size=16 --momentum=0.9
  --exchange_every=4 --epochs=1000 --hidden=512)
# examples <log> <rank>: the examples that rank trained in that run.
examples() { awk -v r="$2" '$1 == "rank" && $2 == r {print $4}' "$1"; }
# hashes <log>: the distinct final-parameter hashes over the ranks.
hashes() { awk '$1 == "rank" {print $6}' "$1" | sort -u | wc -l; }

mpi_run 2 "$probe" "${common[@]}" >"$tmp/full.log" 2>&1
check "uninterrupted run" test $? -eq 0

# Rank 1 alone asks to stop before its worker 0's step 10 (of 16,000).
mpi_run 2 "$probe" "${common[@]}" --checkpoint_dir="$tmp/a" --stop_rank=1 --stop_step=10 \
  --params_out="$tmp/stopped" >"$tmp/stop.log" 2>&1
check "stopped run" test $? -eq 0
check "every rank stopped" test "$(grep -c '^rank [01] .* stopped$' "$tmp/stop.log")" -eq 2
check "every rank ends with the same parameters" test "$(hashes "$tmp/stop.log")" -eq 1
"$probe" --checkpoint_params="$tmp/a" --params_out="$tmp/saved" >"$tmp/saved.txt" 2>&1
check "the checkpoint is readable" test $? -eq 0
cat "$tmp/saved.txt"
check "the checkpoint holds the parameters every rank stopped with, bitwise" \
  cmp -s "$tmp/stopped" "$tmp/saved"
check "the checkpoint holds 2 ranks, 4 positions and 4 momentum buffers" \
  grep -Eq '^checkpoint global_step [0-9]+ ranks 2 next_step [0-9]+,[0-9]+,[0-9]+,[0-9]+ buffers 4$' \
  "$tmp/saved.txt"

mpi_run 2 "$probe" "${common[@]}" --checkpoint_dir="$tmp/a" --resume >"$tmp/resume.log" 2>&1
check "resumed run" test $? -eq 0
check "resumed: every rank ends with the same parameters" test "$(hashes "$tmp/resume.log")" -eq 1
# A rank may have finished its data before the stop (then it trains nothing after the resume);
# the job as a whole had some left.
resumed_total=0
for r in 0 1; do
  full=$(examples "$tmp/full.log" $r)
  before=$(examples "$tmp/stop.log" $r)
  after=$(examples "$tmp/resume.log" $r)
  check "rank $r: $before before the stop + $after resumed == $full uninterrupted" \
    test -n "$full" -a -n "$before" -a -n "$after" -a $((before + after)) -eq "${full:-0}"
  resumed_total=$((resumed_total + ${after:-0}))
done
check "the resumed job trained what the stop left ($resumed_total examples)" \
  test "$resumed_total" -gt 0

# The final checkpoint of a finished run.
mpi_run 2 "$probe" "${common[@]}" --epochs=1 --checkpoint_dir="$tmp/b" --params_out="$tmp/end" \
  >"$tmp/end.log" 2>&1
check "1-epoch run" test $? -eq 0
"$probe" --checkpoint_params="$tmp/b" --params_out="$tmp/end_saved" >"$tmp/end_saved.txt" 2>&1
check "final checkpoint: the parameters every rank ends with, bitwise" \
  cmp -s "$tmp/end" "$tmp/end_saved"

# Another rank count: refused together, before training, printed once.
mpi_run 3 "$probe" "${common[@]}" --checkpoint_dir="$tmp/a" --resume \
  >"$tmp/ranks.out" 2>"$tmp/ranks.err"
rc=$?
cat "$tmp/ranks.err"
check "3 ranks on a 2-rank checkpoint: non-zero exit ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "3 ranks on a 2-rank checkpoint: one error line naming both counts" \
  test "$(grep -c '^error:.*rank count differs: the checkpoint has 2, this run 3' "$tmp/ranks.err")" -eq 1

# SIGTERM to rank 1 alone.
long=(--mode=async --workers=1 --train_examples=20000 --hidden=1024 --epochs=100000)
mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo \
  -np 2 "$probe" "${long[@]}" --stop_on_signals --checkpoint_dir="$tmp/c" >"$tmp/term.log" 2>&1 &
job=$!
victim=""
for _ in $(seq 1 100); do
  for pid in $(pgrep -P "$job"); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
      victim=$pid
    fi
  done
  [[ -n $victim ]] && break
  sleep 0.1
done
sleep 2
check "SIGTERM: found rank 1 running" test -n "$victim"
[[ -n $victim ]] && kill -TERM "$victim"
( sleep 60 && kill -KILL "$job" 2>/dev/null ) &
watchdog=$!
wait "$job"
rc=$?
kill "$watchdog" 2>/dev/null
check "SIGTERM to rank 1: exit status 143 ($rc)" test "$rc" -eq 143
check "SIGTERM to rank 1: every rank stopped" test "$(grep -c ' stopped$' "$tmp/term.log")" -eq 2
check "SIGTERM to rank 1: the checkpoint is written" test -s "$tmp/c/checkpoint.hwckpt"
grep -q ' stopped$' "$tmp/term.log" || cat "$tmp/term.log"

[[ $failures -eq 0 ]] || { echo "$failures failure(s)"; exit 1; }
echo "all async multi-process checkpoint cases passed"
