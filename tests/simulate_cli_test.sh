#!/bin/bash
# The `simulate` command with bad flags: a non-zero exit and exactly one line on stderr that
# starts with "error:" and names the flag. Every case points --data_dir at an empty directory,
# so a flag checked only after loading the dataset would fail with the missing-data message
# instead, and the case would fail.
#
# Usage (from tests/BUILD): simulate_cli_test.sh <path of //sim:simulate>
set -u

simulate="$1"
empty_dir="${TEST_TMPDIR:-$(mktemp -d)}/empty_data_dir"
mkdir -p "$empty_dir"
failures=0
# shellcheck source=tests/expect_one_line_error.sh
source "$(dirname "$0")/expect_one_line_error.sh"

# expect_error <substring the error must contain> <flags...>
echo "staleness,updates" >"$empty_dir/s.csv"  # a previous run's histogram
expect_error() {
  local want="$1"
  shift
  expect_one_line_error "simulate $*" "$want" "$simulate" --data_dir="$empty_dir" "$@"
}

expect_error "--workers=0" --workers=0
expect_error "--staleness_bound has no effect in async mode; it is for ssp mode (--mode=ssp)" \
  --staleness_bound=2
expect_error "--average_every has no effect in sync mode; it is for local_sgd and async_local_sgd modes (--mode=local_sgd or async_local_sgd)" \
  --mode=sync --average_every=2
expect_error "--staleness_bound has no effect with 1 worker" --mode=ssp --workers=1 \
  --staleness_bound=2
expect_error "--staleness_bound=-1" --mode=ssp --staleness_bound=-1
expect_error "--backup_workers=16 is out of range; it must be in [0, 15]" --mode=backup \
  --workers=16 --backup_workers=16
expect_error "--average_every=0" --mode=local_sgd --average_every=0
expect_error "--outer_momentum=1 is out of range; it must be in [0, 1)" --mode=local_sgd \
  --outer_momentum=1
expect_error "--overlap_steps=8 is out of range; it must be in [0, 7]" --mode=local_sgd \
  --overlap_steps=8
expect_error "--mix_alpha has no effect in async mode; it is for local_sgd mode (--mode=local_sgd)" \
  --mix_alpha=0.5
expect_error "--delayed_nesterov has no effect in sync mode; it is for async_local_sgd mode (--mode=async_local_sgd)" \
  --mode=sync --delayed_nesterov=2
expect_error "--dynamic_local_updates has no effect in local_sgd mode; it is for async_local_sgd mode (--mode=async_local_sgd)" \
  --mode=local_sgd --dynamic_local_updates
expect_error "--delayed_nesterov=4 needs an outer momentum (it delays the outer momentum's updates); give --outer_momentum" \
  --mode=async_local_sgd --delayed_nesterov=4
expect_error "--staleness_csv=$empty_dir/s.csv exists" --staleness_csv="$empty_dir/s.csv"
expect_error "--log_every has no effect without --log" --log_every=5
expect_error "the directory ${TEST_TMPDIR:-/tmp}/no_such_dir does not exist" \
  --staleness_csv="${TEST_TMPDIR:-/tmp}/no_such_dir/s.csv"
expect_error "--workers=5000" --workers=5000
expect_error "--mode: unknown mode \"hogwild\"" --mode=hogwild
expect_error "--batch_size=0" --batch_size=0
expect_error "--lr=-1" --lr=-1
expect_error "--step_time_ms=0" --step_time_ms=0
expect_error "(0, 1e9] ms" --step_time_ms=-3
expect_error "--jitter=5" --jitter=5
expect_error "--stragglers=3 does not parse" --stragglers=3
expect_error "--stragglers worker=64 is out of range; it must be a worker id in [0, 63]" --stragglers=64:2
expect_error "--stragglers factor=0.5 is out of range; it must be in [1, 1000]" --stragglers=1:0.5
expect_error "--allreduce_ms=2 applies to --mode=sync, backup, local_sgd or async_local_sgd only (async has no all-reduce)" --allreduce_ms=2
expect_error "(ssp has no all-reduce)" --mode=ssp --allreduce_ms=2
expect_error "--allreduce_ms=-1" --mode=sync --allreduce_ms=-1
# The bandwidth model of an exchange: its own ranges, a latency needs a bandwidth, and the fixed
# time and the model are not given together.
expect_error "--bandwidth_gbps=-1 is out of range [0, 8e6] Gbit/s" --mode=sync --bandwidth_gbps=-1
expect_error "--latency_ms is part of the bandwidth model and needs --bandwidth_gbps" \
  --mode=sync --latency_ms=1
expect_error "--allreduce_ms and --bandwidth_gbps are two models of an exchange's time" \
  --mode=sync --allreduce_ms=2 --bandwidth_gbps=10
expect_error "--bandwidth_gbps applies to sync, backup, local_sgd and async_local_sgd only" \
  --mode=async --bandwidth_gbps=10
expect_error "--max_state_bytes=0" --max_state_bytes=0
# Refused before the data is read (the data directory is empty): the state and the log.
expect_error "exceeds --max_state_bytes=1000" --max_state_bytes=1000
expect_error "--overwrite_log" --log="$empty_dir/s.csv"
expect_error "--staleness_aware_lr" --mode=sync --staleness_aware_lr
expect_error "--hidden has no effect" --model=logreg --hidden=8
expect_error "--train_examples=-1" --train_examples=-1
expect_error "unexpected argument 'extra'" extra
# The command line is read as train reads it: an empty path is refused, not dropped.
expect_error "--staleness_csv is empty (an unset shell variable?); give it a value or leave it out" --staleness_csv=
expect_error "--log is empty" --log=
expect_error "--workers is given twice" --workers=2 --workers=3
expect_one_line_error "simulate empty --data_dir" "--data_dir is empty" "$simulate" --data_dir=
expect_help "simulate" "--staleness_csv" "$simulate"
# Valid flags and no data: the missing file.
expect_error "$empty_dir" --workers=4
# async_local_sgd reads the push time and its own options: accepted (to the missing data).
expect_error "$empty_dir" --mode=async_local_sgd --allreduce_ms=5 --outer_momentum=0.9 \
  --delayed_nesterov=2 --dynamic_local_updates

# The defaults run: on the first 20,000 Fashion-MNIST examples (where it is installed), the
# default command learns (train's lr 0.05 diverged with 64 stale workers: a loss of 1e27 or inf).
fashion=/usr/share/datasets/fashion-mnist
if [[ -e "$fashion/train-images-idx3-ubyte.gz" || -e "$fashion/train-images-idx3-ubyte" ]]; then
  out=$("$simulate" --train_examples=20000 2>&1)
  rc=$?
  accuracy=$(sed -n 's/^final test accuracy \([0-9.]*\)% | test loss \([0-9.]*\) .*/\1 \2/p' <<<"$out")
  if [[ $rc -eq 0 ]] && awk -v a="${accuracy% *}" -v l="${accuracy#* }" \
       'BEGIN { exit !(a > 30 && l < 2.0) }' </dev/null; then
    echo "ok:   the default command learns: test accuracy and loss $accuracy on 20,000 examples"
  else
    echo "FAIL: the default command (exit $rc) did not learn; output:"
    sed 's/^/    /' <<<"$out"
    failures=$((failures + 1))
  fi
else
  echo "skip: the default command's run needs Fashion-MNIST (sudo apt-get install dataset-fashion-mnist)"
fi

# No output destroys another, and none hangs: refused before the data is read.
expect_error "--log=$empty_dir/same.csv is the same file as --staleness_csv=$empty_dir/same.csv; give --log another path" \
  --log="$empty_dir/same.csv" --staleness_csv="$empty_dir/same.csv"
mkfifo "$empty_dir/fifo"
expect_one_line_error "a pipe as --staleness_csv" \
  "--staleness_csv=$empty_dir/fifo is not a regular file (a device, a pipe or a socket), which this run would replace; give a file path" \
  timeout 20 "$simulate" --data_dir="$empty_dir" --staleness_csv="$empty_dir/fifo"

# A tiny dataset (3 images, all zeros, label 0) for whole runs.
tiny_dir="${TEST_TMPDIR:-$(mktemp -d)}/tiny_data"
make_tiny_idx "$tiny_dir"
tiny=(--data_dir="$tiny_dir" --model=logreg --workers=1 --batch_size=1 --epochs=1)
# A pipe that no process reads as --log: refused at once, not waited on (bounded by timeout, so
# a regression fails instead of hanging the test).
expect_one_line_error "a pipe with no reader as --log" \
  "--log=$empty_dir/fifo is a pipe that no process reads, so nothing could be written to it; start its reader first, or give a file path" \
  timeout 20 "$simulate" "${tiny[@]}" --log="$empty_dir/fifo"
# async_local_sgd charges each push --allreduce_ms before its worker's next step: with a push
# after every step (--average_every=1) worker 1's 4 steps of 10 ms (2 of the 3 examples, 2
# epochs) end at 40 ms, as in async, and at 40 + 4 x 5 = 60 ms with 5 ms pushes.
expect_simulated_time() {
  local want="simulated $1 | workers 2 | simulated time $2 s"
  shift 2
  local out rc
  out=$("$simulate" --data_dir="$tiny_dir" --model=logreg --workers=2 --batch_size=1 --epochs=2 \
    "$@" 2>&1)
  rc=$?
  if [[ $rc -eq 0 && $out == *"$want"* ]]; then
    echo "ok:   simulate $* (tiny data): $want"
  else
    echo "FAIL: simulate $* (tiny data): exit $rc, want 0 and '$want'; got:"
    sed 's/^/    /' <<<"$out"
    failures=$((failures + 1))
  fi
}
expect_simulated_time async 0.04 --mode=async
expect_simulated_time async_local_sgd 0.04 --mode=async_local_sgd --average_every=1
expect_simulated_time async_local_sgd 0.06 --mode=async_local_sgd --average_every=1 --allreduce_ms=5
# Calibrated from a log whose worker 0 steps every 125 ms and worker 1 every 250 ms: worker 1 is a
# straggler of factor 2, without jitter, so its 4 steps end at 1 s.
printf '%s\n' "wall_time_s,kind,step,worker" "0.5,train,1,0" "0.5,train,2,1" "0.625,train,3,0" \
  "0.75,train,4,1" "0.75,train,5,0" "0.9,eval,5,-1" "1.0,train,6,1" >"$empty_dir/real.csv"
expect_simulated_time async 1.00 --calibrate_from="$empty_dir/real.csv"
out=$("$simulate" --data_dir="$tiny_dir" --model=logreg --workers=2 --batch_size=1 --epochs=2 \
  --calibrate_from="$empty_dir/real.csv" 2>&1)
if [[ $out == *"--step_time_ms=125 --jitter=0.000 --stragglers=1:2.000"* ]]; then
  echo "ok:   --calibrate_from prints the fitted flags"
else
  echo "FAIL: --calibrate_from's fitted flags: $out"
  failures=$((failures + 1))
fi
expect_error "--step_time_ms and --calibrate_from both set the step times: give one of them" \
  --calibrate_from="$empty_dir/real.csv" --step_time_ms=5
expect_error "--calibrate_from=$empty_dir/none.csv: cannot open it" \
  --calibrate_from="$empty_dir/none.csv"
# A lost standard output is an error that says so.
if [[ -w /dev/full ]]; then
  "$simulate" "${tiny[@]}" >/dev/full 2>"$empty_dir/full.err"
  rc=$?
  if [[ $rc -eq 1 && $(cat "$empty_dir/full.err") == "error: cannot write to standard output (No space left on device)" ]]; then
    echo "ok:   simulate >/dev/full -> exit 1 naming the error"
  else
    echo "FAIL: simulate >/dev/full: exit $rc, stderr: $(cat "$empty_dir/full.err")"
    failures=$((failures + 1))
  fi
fi

# Under an address-space limit too small for the per-worker state: the refusal names the memory
# limit (not a --max_state_bytes nobody typed) and the command exits at once (OpenBLAS's thread,
# stuck retrying its buffer under the limit, must not hold up the exit).
if sanitized "$simulate"; then
  echo "skip: simulate under ulimit -v (a sanitizer's shadow memory needs more address space)"
else
  out=$(ulimit -v 200000; timeout -k 3 30 "$simulate" --data_dir="$empty_dir" 2>&1)
  rc=$?
  if [[ $rc -eq 1 && $out == "error: the simulation's per-worker state ("*") exceeds the memory this process may still use ("*" bytes: the machine's available memory or ulimit -v); use fewer workers or a smaller model, or allow more memory" ]]; then
    echo "ok:   simulate under ulimit -v 200000 -> the memory refusal, exit 1"
  else
    echo "FAIL: simulate under ulimit -v 200000: exit $rc, output: $out"
    failures=$((failures + 1))
  fi
fi

# --help lists the mode flags, which are defined in trainer/cli/mode_flags.cc with train's.
help=$("$simulate" --help 2>&1)
if grep -q -- "--staleness_bound" <<<"$help" && grep -q -- "--backup_workers" <<<"$help" &&
  grep -q -- "--average_every" <<<"$help"; then
  echo "ok:   simulate --help lists --staleness_bound, --backup_workers and --average_every"
else
  echo "FAIL: simulate --help lacks a mode flag: $help"
  failures=$((failures + 1))
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
