#!/bin/bash
# The study runner (//benchmarks:study):
#  - bad flags: a non-zero exit and one "error:" line naming the flag, checked before any data
#    is loaded (--data_dir points at an empty directory);
#  - resumability: a tiny grid on a generated 64-example dataset, run twice into the same
#    --out_dir; the second run trains nothing, says it skipped every run, and writes the same
#    report (study.md, study.csv) byte for byte;
#  - a simulated grid from a flag file: policy options as grid axes, diverged runs reported,
#    the same report from a second study (the simulation is deterministic), its times called
#    simulated time, never wall time;
#  - the report's words: how wide two seeds' intervals are, which final accuracy it gives;
#  - async's learning-rate rules x --max_delay as a grid axis, drops counted per run;
#  - the default sync batch: W times an async worker's batch (the same work per worker step);
#  - the sparse workloads: their flags checked before any data, a simulated sparse SVM study
#    over the policies and worker counts, resumable like the others.
#
# Usage (from tests/BUILD): study_cli_test.sh <path of //benchmarks:study>
set -u

study="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
empty_dir="$tmp/empty_data_dir"
mkdir -p "$empty_dir"
failures=0
# shellcheck source=tests/expect_one_line_error.sh
source "$(dirname "$0")/expect_one_line_error.sh"

# expect_error <substring the error must contain> <flags...>
expect_error() {
  local want="$1"
  shift
  expect_one_line_error "study $*" "$want" "$study" --data_dir="$empty_dir" --out_dir="$tmp/bad_out" --plot=false "$@"
}

expect_error "--modes: unknown mode \"hogwild\"; the modes are async, sync, ssp, backup, local_sgd, locked, round_robin, async_local_sgd, cyclades and buckwild" \
  --modes=async,hogwild
expect_error "--workers=" --workers=two
expect_error "--seeds=" --seeds=-1
expect_error "--seeds=1,1: 1 is given twice" --seeds=1,1
expect_error "--workers=1,,2: '' is not a non-negative integer" --workers=1,,2
expect_error "--out_dir is empty" --out_dir=
expect_error "--lrs=0: '0' is out of range; each value must be in (0, 1e6]" --lrs=0
expect_error "--momentums=0.9,1: '1' is out of range; each value must be in [0, 1)" \
  --momentums=0.9,1
expect_error "--target_accuracy=85 is out of range; it must be in (0, 1]" --target_accuracy=85
expect_error "--staleness_bound=-1: '-1' is not a non-negative integer" --modes=ssp \
  --staleness_bound=-1
expect_error "--average_every: 0 is out of range; each value must be in [1," --modes=local_sgd \
  --average_every=0
expect_error "--backup_workers: 2 is out of range for 2 workers; each value must be in [0, 1]" \
  --modes=backup --workers=2 --backup_workers=0,2
expect_error "--staleness_aware_lr=off,maybe: 'maybe' is neither off nor on" \
  --staleness_aware_lr=off,maybe
expect_error "--sync_lrs=0.1,-2: '-2' is out of range" --sync_lrs=0.1,-2
expect_error "--sync_batch_size=-1 is out of range; it must be >= 0 (0: W times an async worker's batch)" \
  --sync_batch_size=-1
expect_error "--step_time_ms has no effect without --simulate" --step_time_ms=5
expect_error "--async_total_batch=100 is not a multiple of 3 workers" --workers=3 \
  --async_total_batch=100
expect_error "--jitter=5 is out of range [0, 4]" --simulate --jitter=5
expect_error "--straggler_delay delays real threads; with --simulate give --jitter" --simulate \
  --straggler_delay=50ms@0.1
expect_error "--staleness_bound has no effect: the grid has no ssp runs" --modes=async \
  --staleness_bound=0
expect_error "--average_every has no effect: the grid has no local_sgd or async_local_sgd runs" --average_every=4
expect_error "--outer has no effect: the grid has no local_sgd or async_local_sgd runs" --outer=diloco
expect_error "--streaming has no effect: the grid has no local_sgd runs" --streaming=2:1:0.5
expect_error "--streaming=off,2:1: '2:1' is not off or F:TAU:ALPHA (e.g. 4:1:0.5)" \
  --modes=local_sgd --streaming=off,2:1
expect_error "--streaming=2:1:1: '2:1:1': streaming mix_alpha=1 is out of range; it must be in [0, 1)" \
  --modes=local_sgd --streaming=2:1:1
expect_error "--outer=avg,0.7: '0.7' is not avg, diloco or LR:MOMENTUM[:nesterov]" \
  --modes=local_sgd --outer=avg,0.7
expect_error "--outer=3:0.9: '3:0.9': outer lr=3 is out of range; it must be in (0, 2]" \
  --modes=local_sgd --outer=3:0.9
expect_error "--outer=0.7:0:nesterov: '0.7:0:nesterov': outer nesterov needs outer momentum > 0" \
  --modes=local_sgd --outer=0.7:0:nesterov
expect_error "--delayed_nesterov has no effect: the grid has no async_local_sgd runs (--modes or --runs)" \
  --delayed_nesterov=2
expect_error "--dynamic_local_updates has no effect: the grid has no async_local_sgd runs (--modes or --runs)" \
  --modes=local_sgd --dynamic_local_updates=on
expect_error "--dynamic_local_updates: \"maybe\" is not off or on; give off, on or off,on" \
  --modes=async_local_sgd --dynamic_local_updates=off,maybe
expect_error "--delayed_nesterov: 0 is out of range; each value must be in [1, 1048576]" \
  --modes=async_local_sgd --delayed_nesterov=0
# A delay that no --outer value has momentum for: refused, not a grid left empty.
expect_error "--delayed_nesterov=2 needs an outer momentum (it delays the outer momentum's updates); give an --outer value with momentum" \
  --runs=async_local_sgd:2 --delayed_nesterov=2
expect_error "--staleness_aware_lr=on has no effect: the grid has no async runs with more than one worker" \
  --modes=sync --staleness_aware_lr=on
expect_error "--async_lr=constant,fast: 'fast' is not a learning-rate rule (give constant, staleness_aware or delay_adaptive, comma-separated)" \
  --async_lr=constant,fast
expect_error "--async_lr and --staleness_aware_lr both choose async's learning-rate rule; give --async_lr alone (--staleness_aware_lr=off,on is --async_lr=constant,staleness_aware)" \
  --async_lr=delay_adaptive --staleness_aware_lr=on
expect_error "--max_delay=4,-1: '-1' is not a non-negative integer" --max_delay=4,-1
expect_error "--max_delay: 2000000000000 is out of range; each value must be in [0, 1099511627776]" \
  --max_delay=2000000000000
expect_error "--max_delay has no effect: the grid has no async runs with more than one worker" \
  --runs=async:1,sync:2 --max_delay=4
expect_error "--async_lr has no effect: the grid has no async runs with more than one worker" \
  --modes=sync --async_lr=delay_adaptive
expect_error "--allreduce_ms has no effect: the grid has no sync, backup, local_sgd or async_local_sgd runs" \
  --simulate --modes=async,ssp --allreduce_ms=5
expect_error "--bandwidth_gbps has no effect without --simulate" --modes=sync --bandwidth_gbps=10
# Checked before the first run: nothing is written.
expect_error "--latency_ms is part of the bandwidth model and needs --bandwidth_gbps" \
  --simulate --modes=sync --latency_ms=1
expect_error "--bandwidth_gbps has no effect: the grid has no sync, backup, local_sgd or async_local_sgd runs" \
  --simulate --modes=async --bandwidth_gbps=10
expect_error "--backup_workers (default 1; give --backup_workers=0 for 1-worker backup runs)" \
  --modes=backup --workers=1
expect_error "--epochs=0" --epochs=0
expect_error "--batch_size (or --sync_batch_size)=0" --batch_size=0
expect_error "--hidden=0: " --hidden=0
expect_error "unexpected argument 'extra'" extra
# Valid flags and no data: the missing file, and nothing written.
expect_error "$empty_dir" --workers=1
if [[ -e "$tmp/bad_out" ]]; then
  echo "FAIL: a refused study created its --out_dir"
  failures=$((failures + 1))
else
  echo "ok:   no refused study created its --out_dir"
fi
expect_error "--stragglers=1x3 does not parse" --stragglers=1x3
expect_error "--straggler_delay=fast does not parse" --straggler_delay=fast
expect_error "--stragglers/--straggler_delay with 1 workers" --workers=1 --stragglers=3:2

# A 64-example dataset of random 28x28 images with labels 0..9, train and test alike.
data="$tmp/tiny_data"
mkdir -p "$data"
for split in train t10k; do
  { printf '\x00\x00\x08\x03\x00\x00\x00\x40\x00\x00\x00\x1c\x00\x00\x00\x1c'
    head -c $((64 * 784)) /dev/urandom; } >"$data/$split-images-idx3-ubyte"
  { printf '\x00\x00\x08\x01\x00\x00\x00\x40'
    for i in $(seq 0 63); do printf "\\x0$((i % 10))"; done; } >"$data/$split-labels-idx1-ubyte"
done
grid=(--data_dir="$data" --modes=async,sync,backup --workers=2 --seeds=1,2 --lrs=0.01,0.02
      --batch_size=8 --sync_batch_size=8 --epochs=1 --eval_every_epochs=0.5 --log_every=1
      --target_accuracy=0.1 --plot=false --out_dir="$tmp/study")
"$study" "${grid[@]}" >"$tmp/first.txt" 2>&1
rc=$?
cp "$tmp/study/study.md" "$tmp/first.md" 2>/dev/null
cp "$tmp/study/study.csv" "$tmp/first.csv" 2>/dev/null
trained=$(grep -c '^run .*(batch' "$tmp/first.txt")
if [[ $rc -eq 0 && $trained -eq 12 ]] && grep -q '^run 12/12: ' "$tmp/first.txt" &&
   [[ $(grep -c '^| backup(b=1) w=2 lr=0.0[12] m=0 | 2 |' "$tmp/study/study.md") -eq 2 ]]; then
  echo "ok:   first run trained 12 runs and reported 6 configurations of 2 seeds"
else
  echo "FAIL: first run (exit $rc, $trained runs trained, want 12); output:"
  sed 's/^/    /' "$tmp/first.txt"
  failures=$((failures + 1))
fi
"$study" "${grid[@]}" >"$tmp/second.txt" 2>&1
rc=$?
if [[ $rc -eq 0 ]] && ! grep -q '(batch' "$tmp/second.txt" &&
   grep -q "skipped 12 of 12 runs" "$tmp/second.txt" &&
   cmp -s "$tmp/first.md" "$tmp/study/study.md" && cmp -s "$tmp/first.csv" "$tmp/study/study.csv"; then
  echo "ok:   second run trained nothing, skipped 12 of 12, same study.md and study.csv"
else
  echo "FAIL: second run (exit $rc); output:"
  sed 's/^/    /' "$tmp/second.txt"
  diff "$tmp/first.md" "$tmp/study/study.md"
  failures=$((failures + 1))
fi
# Two seeds: the report says how wide that makes the intervals, and which final accuracy it gives.
if grep -qF "Few seeds: with 2 seeds a 95% interval's half-width is 12.71 / sqrt(2) = 9.0 times the seeds' standard deviation" "$tmp/first.md" &&
   grep -qF "Final test accuracy: the parameters after each run's last update, which may be an epoch's short last batch" "$tmp/first.md"; then
  echo "ok:   the report says two seeds give wide intervals, and which final accuracy it gives"
else
  echo "FAIL: the report's notes on few seeds and the final accuracy are missing:"
  sed 's/^/    /' "$tmp/first.md"
  failures=$((failures + 1))
fi

# The study directory moved: its records and logs are found under the new --out_dir.
mv "$tmp/study" "$tmp/moved"
"$study" "${grid[@]}" --out_dir="$tmp/moved" >"$tmp/moved.txt" 2>&1
if [[ $? -eq 0 ]] && grep -q "skipped 12 of 12 runs" "$tmp/moved.txt" &&
   cmp -s "$tmp/first.md" "$tmp/moved/study.md"; then
  echo "ok:   a moved --out_dir resumes: skipped 12 of 12, same study.md"
else
  echo "FAIL: rerun in the moved --out_dir; output:"
  sed 's/^/    /' "$tmp/moved.txt"
  failures=$((failures + 1))
fi
mv "$tmp/moved" "$tmp/study"

# A record that went missing (an interrupted run) is trained again, and only that one.
rm "$(ls "$tmp"/study/runs/sync_*_s2_*.run | head -n 1)"
"$study" "${grid[@]}" >"$tmp/third.txt" 2>&1
if [[ $? -eq 0 && $(grep -c '(batch' "$tmp/third.txt") -eq 1 ]] &&
   grep -q "skipped 11 of 12 runs" "$tmp/third.txt"; then
  echo "ok:   a missing record: that run alone trained again"
else
  echo "FAIL: third run after deleting one record; output:"
  sed 's/^/    /' "$tmp/third.txt"
  failures=$((failures + 1))
fi

# A simulated grid from a flag file (Abseil's --flagfile): the policy options are grid axes, a
# learning rate that diverges is a result ("1 of 1 seeds diverged"), not the end of the study,
# and the simulation is deterministic: a second study in another directory writes the same
# report byte for byte, simulated times included.
printf '%s\n' --data_dir="$data" --simulate --jitter=0.5 --modes=async,ssp --workers=4 \
  --staleness_bound=0,2 --staleness_aware_lr=off,on --lrs=0.01,100000 --batch_size=4 \
  --epochs=1 --eval_every_epochs=0.5 --target_accuracy=0.1 --plot=false >"$tmp/sim.flags"
"$study" --flagfile="$tmp/sim.flags" --out_dir="$tmp/sim1" >"$tmp/sim1.txt" 2>&1
rc1=$?
"$study" --flagfile="$tmp/sim.flags" --out_dir="$tmp/sim2" >"$tmp/sim2.txt" 2>&1
rc2=$?
if [[ $rc1 -eq 0 && $rc2 -eq 0 ]] && grep -q '^run 8/8: ' "$tmp/sim1.txt" &&
   grep -q '^Simulated runs' "$tmp/sim1/study.md" &&
   [[ $(grep -c '^| .* lr=100000 m=0 | 1 | .* | 1 of 1 seeds diverged |' "$tmp/sim1/study.md") -eq 4 ]] &&
   grep -q '^| async(lr/staleness) w=4 lr=0.01 m=0 | 1 | ' "$tmp/sim1/study.md" &&
   grep -q '^| ssp(bound=0) w=4 lr=0.01 m=0 | 1 | ' "$tmp/sim1/study.md" &&
   grep -q '^| ssp(bound=2) w=4 lr=0.01 m=0 | 1 | ' "$tmp/sim1/study.md" &&
   cmp -s "$tmp/sim1/study.md" "$tmp/sim2/study.md" &&
   [[ $(grep -c '^  simulated .* | simulated time [0-9.]* s |' "$tmp/sim1.txt") -eq 4 ]] &&
   grep -qF '| simulated time (s) | simulated time to 10% (s) |' "$tmp/sim1/summary.md" &&
   ! grep -qi 'wall time' "$tmp/sim1.txt" "$tmp/sim1/summary.md" "$tmp/sim1/study.md"; then
  echo "ok:   simulated grid from a flag file: 8 runs, 4 diverged configurations reported as such, reproducible"
else
  echo "FAIL: simulated grid (exit $rc1, $rc2); output and report:"
  sed 's/^/    /' "$tmp/sim1.txt" "$tmp/sim1/study.md"
  diff "$tmp/sim1/study.md" "$tmp/sim2/study.md"
  failures=$((failures + 1))
fi

# Streaming DiLoCo's options are a grid axis: off keeps the plain label, F:TAU:ALPHA is its own
# configuration, another run: 8 steps in rounds of 2 are 4 averagings, and 2 fragments 9 exchanges
# (the last step's missing fragment exchanged at the end). (Not the final losses: the data are
# random bytes, on which two runs can agree to the table's 4 decimals.)
"$study" --data_dir="$data" --simulate --runs=local_sgd:2 --average_every=2 \
  --streaming=off,2:1:0.5 --batch_size=4 --epochs=1 --target_accuracy=0.1 --plot=false \
  --out_dir="$tmp/streaming" >"$tmp/streaming.txt" 2>&1
rc=$?
if [[ $rc -eq 0 ]] && grep -q '^run 2/2: ' "$tmp/streaming.txt" &&
   grep -q '^| local_sgd(H=2) w=2 lr=0.05 m=0 | 1 | ' "$tmp/streaming/study.md" &&
   grep -q '^| local_sgd(H=2 streaming=2:1:0.5) w=2 lr=0.05 m=0 | 1 | ' "$tmp/streaming/study.md" &&
   grep -q '| 4 exchanges,' "$tmp/streaming.txt" && grep -q '| 9 exchanges,' "$tmp/streaming.txt"; then
  echo "ok:   --streaming is a grid axis of local_sgd runs: off and F:TAU:ALPHA, two runs"
else
  echo "FAIL: --streaming grid (exit $rc); output and report:"
  sed 's/^/    /' "$tmp/streaming.txt" "$tmp/streaming/study.md"
  failures=$((failures + 1))
fi

# local_sgd's outer optimizer is a grid axis: plain averaging keeps its label (and so its runs'
# keys), DiLoCo's and a custom one are their own configurations, with other results: their logs'
# last rows (full precision, outer_step_norm included) differ. (Not the table's final losses: the
# data are random bytes, on which two runs can agree to 4 decimals.)
"$study" --data_dir="$data" --simulate --runs=local_sgd:2 --average_every=2 \
  --outer=avg,diloco,0.5:0.8 --batch_size=4 --epochs=1 --target_accuracy=0.1 --plot=false \
  --out_dir="$tmp/outer" >"$tmp/outer.txt" 2>&1
rc=$?
if [[ $rc -eq 0 ]] && grep -q '^run 3/3: ' "$tmp/outer.txt" &&
   grep -q '^| local_sgd(H=2) w=2 lr=0.05 m=0 | 1 | ' "$tmp/outer/study.md" &&
   grep -q '^| local_sgd(H=2 outer=diloco) w=2 lr=0.05 m=0 | 1 | ' "$tmp/outer/study.md" &&
   grep -q '^| local_sgd(H=2 outer=0.5:0.8) w=2 lr=0.05 m=0 | 1 | ' "$tmp/outer/study.md" &&
   [[ $(tail -n +2 "$tmp/outer/runs.csv" | awk -F, '{print $NF}' | xargs -n1 tail -1 | sort -u | wc -l) -eq 3 ]]; then
  echo "ok:   --outer is a grid axis of local_sgd runs: avg, diloco and LR:MOMENTUM, three results"
else
  echo "FAIL: --outer grid (exit $rc); output and report:"
  sed 's/^/    /' "$tmp/outer.txt" "$tmp/outer/study.md"
  failures=$((failures + 1))
fi

# async_local_sgd's options are grid axes: --delayed_nesterov x --dynamic_local_updates, each
# pair its own configuration and label; N=2 is skipped with --outer=avg (no momentum to delay)
# and run with diloco's: 2 + 4 configurations.
"$study" --data_dir="$data" --simulate --allreduce_ms=1 --runs=async_local_sgd:2 --average_every=2 \
  --outer=avg,diloco --delayed_nesterov=1,2 --dynamic_local_updates=off,on --batch_size=4 \
  --epochs=1 --target_accuracy=0.1 --plot=false --out_dir="$tmp/alsgd" >"$tmp/alsgd.txt" 2>&1
rc=$?
labels_found=0
for label in "async_local_sgd(H=2)" "async_local_sgd(H=2 dylu)" "async_local_sgd(H=2 outer=diloco)" \
    "async_local_sgd(H=2 outer=diloco dylu)" "async_local_sgd(H=2 outer=diloco N=2)" \
    "async_local_sgd(H=2 outer=diloco N=2 dylu)"; do
  grep -qF "| $label w=2 lr=0.05 m=0 | 1 | " "$tmp/alsgd/study.md" && labels_found=$((labels_found + 1))
done
if [[ $rc -eq 0 && $labels_found -eq 6 ]] && grep -q '^run 6/6: ' "$tmp/alsgd.txt" &&
   [[ $(grep -c '^| async_local_sgd' "$tmp/alsgd/study.md") -eq 6 ]]; then
  echo "ok:   --delayed_nesterov x --dynamic_local_updates x --outer is a grid axis of async_local_sgd runs: 6 configurations"
else
  echo "FAIL: async_local_sgd grid (exit $rc, $labels_found of 6 labels); output and report:"
  sed 's/^/    /' "$tmp/alsgd.txt" "$tmp/alsgd/study.md"
  failures=$((failures + 1))
fi

# Async's delay rules are grid axes: --async_lr (constant keeps the bare "async" label, and so
# its runs' keys) x --max_delay, each pair a configuration of its own, labelled without commas
# (runs.csv is split on them); the 1-worker run is the plain one only. Jitter makes updates
# staler than 4: the R=4 runs drop some, and their per-run lines count them; the delay-adaptive
# rate is read (another log than the constant rate's).
"$study" --data_dir="$data" --simulate --jitter=1 --runs=async:1,async:4 \
  --async_lr=constant,staleness_aware,delay_adaptive --max_delay=0,4 --batch_size=2 --epochs=1 \
  --target_accuracy=0.1 --plot=false --out_dir="$tmp/delay" >"$tmp/delay.txt" 2>&1
rc=$?
log_of() { awk -F, -v c="$1" '$1 == c { print $7 }' "$tmp/delay/runs.csv"; }
labels_found=0
for label in "async w=1" "async w=4" "async(R=4) w=4" "async(lr/staleness) w=4" \
    "async(lr/staleness R=4) w=4" "async(lr delay-adaptive) w=4" "async(lr delay-adaptive R=4) w=4"; do
  grep -qF "| $label lr=0.05 m=0 | 1 | " "$tmp/delay/study.md" && labels_found=$((labels_found + 1))
done
if [[ $rc -eq 0 && $labels_found -eq 7 ]] && grep -q '^run 7/7: ' "$tmp/delay.txt" &&
   [[ $(grep -c ' gradients dropped (too stale)$' "$tmp/delay.txt") -eq 3 ]] &&
   [[ $(grep -c '^run .*R=4' "$tmp/delay.txt") -eq 3 ]] &&
   [[ $(awk -F, 'NF != 7' "$tmp/delay/runs.csv" | wc -l) -eq 0 ]] &&
   [[ -s "$(log_of "async w=4 lr=0.05 m=0")" ]] &&
   ! cmp -s "$(log_of "async w=4 lr=0.05 m=0")" "$(log_of "async(lr delay-adaptive) w=4 lr=0.05 m=0")"; then
  echo "ok:   --async_lr x --max_delay is a grid axis of async runs: 7 configurations, drops counted"
else
  echo "FAIL: --async_lr x --max_delay grid (exit $rc, $labels_found of 7 labels); output, report and runs.csv:"
  sed 's/^/    /' "$tmp/delay.txt" "$tmp/delay/study.md" "$tmp/delay/runs.csv"
  failures=$((failures + 1))
fi

# The default sync batch is W times an async worker's (--batch_size=4, 4 workers: 16), so that
# each worker step computes as many examples in both modes; --drop_last is every run's and the
# report says so.
"$study" --data_dir="$data" --simulate --modes=async,sync --workers=4 --batch_size=4 --epochs=1 \
  --drop_last --target_accuracy=0.1 --plot=false --out_dir="$tmp/fair" >"$tmp/fair.txt" 2>&1
rc=$?
if [[ $rc -eq 0 ]] && grep -q '^run 1/2: async w=4 lr=0.05 m=0 seed=1 (batch 4, 1 epochs)' "$tmp/fair.txt" &&
   grep -q '^run 2/2: sync w=4 lr=0.05 m=0 seed=1 (batch 16, 1 epochs)' "$tmp/fair.txt" &&
   grep -q '^  simulated async | workers 4 | .* | 64 examples, 16 steps' "$tmp/fair.txt" &&
   grep -q '^  simulated sync | workers 4 | .* | 64 examples, 4 steps' "$tmp/fair.txt" &&
   grep -qF "Final test accuracy: the parameters after each run's last update, a full batch (--drop_last left out each epoch's short last batch)." "$tmp/fair/study.md"; then
  echo "ok:   the default sync batch is W x the async batch; --drop_last is named in the report"
else
  echo "FAIL: default sync batch (exit $rc); output and report:"
  sed 's/^/    /' "$tmp/fair.txt" "$tmp/fair/study.md"
  failures=$((failures + 1))
fi

# The sparse workloads: their flags and the need for --simulate are checked before any data;
# a sparse SVM study over the simulated policies and worker counts writes its report, with the
# same rows on a rerun that trains nothing.
expect_one_line_error "study --workload=sparse" \
  "--workload=sparse is not a workload: dense, sparse_logreg, sparse_svm or mf" \
  "$study" --workload=sparse --out_dir="$tmp/bad_out" --plot=false
expect_one_line_error "study dense flag with sparse" "--data_dir applies to --workload=dense only" \
  "$study" --workload=sparse_svm --simulate --data_dir="$empty_dir" --out_dir="$tmp/bad_out" \
  --plot=false
expect_error "--synthetic_examples applies to --workload=sparse_logreg or sparse_svm only" \
  --synthetic_examples=100
expect_one_line_error "study sparse without a test set" \
  "--workload=sparse_svm has no test set to compare the runs on: give --synthetic_test_examples (e.g. 5000)" \
  "$study" --workload=sparse_svm --out_dir="$tmp/bad_out" --plot=false
expect_one_line_error "study real sparse momentum" \
  "--momentums has no effect on --workload=sparse_svm's real runs (the sparse trainers' plain SGD); add --simulate or leave it out" \
  "$study" --workload=sparse_svm --momentums=0.9 --synthetic_test_examples=10 \
  --out_dir="$tmp/bad_out" --plot=false
expect_error "error: run async w=1 lr=0.05 m=0 seed 1: --weight_decay=-1 is out of range; it must be >= 0" \
  --weight_decay=-1
expect_one_line_error "study sparse weight decay" "--weight_decay=-1 is out of range [0, float32 max]" \
  "$study" --workload=sparse_svm --weight_decay=-1 --synthetic_examples=100 \
  --synthetic_test_examples=10 --out_dir="$tmp/bad_out" --plot=false
expect_one_line_error "study mf rank" "--rank=0 is out of range [1, 1024]" \
  "$study" --workload=mf --rank=0 --out_dir="$tmp/bad_out" --plot=false
# Real sparse runs take every mode (the sparse trainers run the policies of sync/).
"$study" --workload=sparse_svm --modes=ssp,backup,local_sgd --workers=2 --batch_size=2 \
  --synthetic_examples=400 --synthetic_test_examples=50 --synthetic_features=200 --synthetic_nnz=8 \
  --epochs=1 --out_dir="$tmp/sparse_real" --plot=false >"$tmp/sparse_real.txt" 2>&1
if [[ $? -ne 0 ]]; then
  echo "FAIL: study real sparse ssp, backup, local_sgd:"
  sed 's/^/    /' "$tmp/sparse_real.txt"
  failures=$((failures + 1))
else
  echo "ok:   study real sparse ssp, backup, local_sgd"
fi
# Real mf runs train on the study's batches: a batch larger than the training ratings is the
# trainer's refusal, not a run of one rating per update.
awk 'BEGIN { print "userId,movieId,rating";
  for (u = 1; u <= 10; u++) for (i = 1; i <= 10; i++) printf "%d,%d,%d\n", u, i, 1 + (u + i) % 5 }' \
  >"$tmp/ratings.csv"
expect_one_line_error "study real mf batch" \
  "--batch_size=500 is out of range [1, 90] (the training set's ratings)" \
  "$study" --workload=mf --ratings="$tmp/ratings.csv" --rank=2 --modes=async --workers=1 \
  --batch_size=500 --epochs=1 --out_dir="$tmp/mf_batch" --plot=false
sparse_flags=(--workload=sparse_svm --simulate --runs=async:1,async:4,ssp:4,backup:4,local_sgd:4
  --seeds=1,2 --synthetic_examples=800 --synthetic_test_examples=200 --synthetic_features=300
  --synthetic_nnz=10 --batch_size=2 --lrs=0.2 --epochs=2 --target_accuracy=0.6 --plot=false
  --out_dir="$tmp/svm")
"$study" "${sparse_flags[@]}" >"$tmp/svm1.txt" 2>&1
rc1=$?
cp "$tmp/svm/study.md" "$tmp/svm_first.md" 2>/dev/null
"$study" "${sparse_flags[@]}" >"$tmp/svm2.txt" 2>&1
rc2=$?
if [[ $rc1 -eq 0 && $rc2 -eq 0 ]] && grep -q '^run 10/10: local_sgd(H=8) w=4' "$tmp/svm1.txt" &&
   grep -q '^| backup(b=1) w=4 lr=0.2 m=0 | 2 |' "$tmp/svm/study.md" &&
   grep -q '^| ssp(bound=3) w=4 lr=0.2 m=0 | 2 |' "$tmp/svm/study.md" &&
   grep -q 'skipped 10 of 10 runs' "$tmp/svm2.txt" &&
   cmp -s "$tmp/svm_first.md" "$tmp/svm/study.md"; then
  echo "ok:   a simulated sparse SVM study over async, ssp, backup and local_sgd writes its report"
else
  echo "FAIL: sparse SVM study (exit $rc1, $rc2); output and report:"
  sed 's/^/    /' "$tmp/svm1.txt" "$tmp/svm2.txt" "$tmp/svm/study.md"
  failures=$((failures + 1))
fi

# Real sparse runs: the sparse trainer's modes, one log row pair per epoch, a report.
"$study" --workload=sparse_logreg --runs=async:1,locked:2,round_robin:2 --seeds=1 \
  --synthetic_examples=600 --synthetic_test_examples=100 --synthetic_features=200 \
  --synthetic_nnz=8 --batch_size=1 --lrs=0.3 --epochs=2 --target_accuracy=0.5 --plot=false \
  --out_dir="$tmp/real_sparse" >"$tmp/real_sparse.txt" 2>&1
rc=$?
if [[ $rc -eq 0 ]] && grep -q '^| round_robin w=2 lr=0.3 m=0 | 1 |' "$tmp/real_sparse/study.md" &&
   grep -q '^Workload: sparse_logreg on the synthetic RCV1-like set (600 training and 100 test examples, 200 features, about 8 non-zeros each). Real runs are the sparse trainers' "$tmp/real_sparse/study.md" &&
   [[ $(grep -c ',eval,' "$tmp/real_sparse/runs/"*.csv | awk -F: '{s += $2} END {print s}') -eq 6 ]]; then
  echo "ok:   real sparse runs (async, locked, round_robin) write their logs and report"
else
  echo "FAIL: real sparse study (exit $rc); output and report:"
  sed 's/^/    /' "$tmp/real_sparse.txt" "$tmp/real_sparse/study.md"
  failures=$((failures + 1))
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
