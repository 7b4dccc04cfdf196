#!/bin/bash
# The `//sparse:train` and `//sparse:make_synthetic` commands: a small synthetic set written
# as LIBSVM (gzip) trains from the file in every mode with a progress line per epoch, a summary
# and a convergence log; bad flags and bad files are one line on stderr naming them, exit 1.
#
# Usage (from tests/BUILD): sparse_cli_test.sh <path of //sparse:train> <of //sparse:make_synthetic>
set -u

train="$1"
make_synthetic="$2"
dir="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
# shellcheck source=tests/expect_one_line_error.sh
source "$(dirname "$0")/expect_one_line_error.sh"

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

small=(--examples=3000 --features=2000 --nnz=20)
"$make_synthetic" "${small[@]}" --out="$dir/train.svm.gz" >/dev/null || fail "make_synthetic train"
# The test set: the rows after the training rows, from the same planted model.
"$make_synthetic" "${small[@]}" --first_example=3000 --examples=500 --out="$dir/test.svm" >/dev/null ||
  fail "make_synthetic test"

for mode in async sync ssp backup local_sgd locked round_robin async_local_sgd cyclades buckwild; do
  # local_sgd splits each global batch into the workers' local batches: one example each;
  # cyclades samples rounds of updates.
  batch=1
  [[ $mode == local_sgd ]] && batch=2
  [[ $mode == cyclades ]] && batch=300
  out=$("$train" --dataset="$dir/train.svm.gz" --test="$dir/test.svm" --mode=$mode --workers=2 \
    --batch_size=$batch --epochs=3 --lr_decay=0.9 --log="$dir/$mode.csv" 2>&1) ||
    fail "$mode: exit $?: $out"
  [[ $(grep -c '^epoch [0-9]/3 | lr' <<<"$out") -eq 3 ]] || fail "$mode: not 3 epoch lines: $out"
  grep -q "^done: 3 epochs" <<<"$out" || fail "$mode: no summary: $out"
  # A learned model: the held-out accuracy is far above chance (0.79 here).
  acc=$(sed -n 's/.*; test log-loss [0-9.]*, accuracy \([0-9.]*\).*$/\1/p' <<<"$out")
  [[ -n $acc ]] && awk "BEGIN{exit !($acc > 0.7)}" || fail "$mode: test accuracy '$acc': $out"
  # Header + a train and an eval row per epoch.
  [[ $(wc -l <"$dir/$mode.csv") -eq 7 ]] || fail "$mode: log has $(wc -l <"$dir/$mode.csv") lines"
  [[ $(grep -c ',eval,' "$dir/$mode.csv") -eq 3 ]] || fail "$mode: log lacks eval rows"
  echo "ok:   $mode trains from the gzip file, logs 3 epochs, test accuracy $acc"
done

out=$("$train" --synthetic_examples=2000 --synthetic_test_examples=300 --synthetic_features=1000 \
  --synthetic_nnz=10 --model=svm --workers=1 --epochs=2 2>&1) || fail "synthetic svm: $out"
grep -q "; test: 300 examples" <<<"$out" && grep -q "test hinge loss" <<<"$out" ||
  fail "synthetic test set: $out"

# A directory of mails (sparse/mail_corpus.h): ham about meetings, spam about cash; every fifth
# mail of each folder is a test mail, and the model tells the held-out ones apart.
for k in $(seq -w 0 49); do
  mkdir -p "$dir/mail/ham" "$dir/mail/spam"
  printf 'Subject: meeting %s\n\nsee you at the meeting about the report %s\n' $k $k \
    >"$dir/mail/ham/$k.txt"
  printf 'Subject: WIN CASH %s\n\nfree cash prize click now %s\n' $k $k >"$dir/mail/spam/$k.txt"
done
out=$("$train" --dataset="$dir/mail" --model=svm --workers=2 --epochs=3 2>&1) ||
  fail "mail corpus: exit $?: $out"
grep -q "(80 examples x 262144 features, .*; test: 20 examples)" <<<"$out" &&
  grep -q "; test hinge loss [0-9.]*, accuracy 1.0000" <<<"$out" || fail "mail corpus: $out"
echo "ok:   a directory of mails trains (80 train, 20 test mails, all held-out ones right)"
# make_synthetic --mail writes those very rows as LIBSVM: trained from the files, one worker
# ends with the same losses and accuracies.
"$make_synthetic" --mail="$dir/mail" --out="$dir/mail.svm" --test_out="$dir/mail_test.svm" \
  >/dev/null || fail "make_synthetic --mail"
finals() { "$train" --workers=1 --epochs=2 "$@" 2>&1 | sed -n 's/^done: .*); \(final .*\)/\1/p'; }
a=$(finals --dataset="$dir/mail") b=$(finals --dataset="$dir/mail.svm" \
  --test="$dir/mail_test.svm" --num_features=262144)
[[ -n $a && $a == "$b" ]] || fail "mail corpus vs its LIBSVM export: '$a' vs '$b'"
echo "ok:   the LIBSVM export of the mails trains to the same result: $a"
expect_one_line_error "mail corpus with --test" "error: --test and --num_features apply to LIBSVM files; a mail corpus has its own test split and 2^18 hashed features" \
  "$train" --dataset="$dir/mail" --test="$dir/test.svm"
mkdir -p "$dir/inbox/personal"
expect_one_line_error "unnamed mail group" "personal: a group's name must say its class (contain \"spam\" or \"ham\")" \
  "$train" --dataset="$dir/inbox"

# Matrix factorization of a small ratings CSV (a planted rank-2 matrix): the test RMSE falls
# below the global mean's.
awk 'BEGIN { print "userId,movieId,rating"; srand(3);
  for (u = 1; u <= 120; u++) { a[u] = rand() - 0.5; c[u] = rand() - 0.5 }
  for (i = 1; i <= 90; i++) { b[i] = rand() - 0.5; d[i] = rand() - 0.5 }
  for (u = 1; u <= 120; u++) for (i = 1; i <= 90; i++) if (rand() < 0.4)
    printf "%d,%d,%.3f\n", u, 1000 + i, 3 + 4 * (a[u] * b[i] + c[u] * d[i]) }' >"$dir/ratings.csv"
out=$("$train" --model=mf --dataset="$dir/ratings.csv" --rank=4 --workers=2 --epochs=40 \
  --lr=0.05 --weight_decay=0.01 --log="$dir/mf.jsonl" 2>&1) || fail "mf: exit $?: $out"
rmse=$(sed -n 's/^done: .*; test RMSE \([0-9.]*\) against \([0-9.]*\) .*/\1 \2/p' <<<"$out")
[[ -n $rmse ]] && awk -v r="$rmse" 'BEGIN { split(r, x, " "); exit !(x[1] < 0.8 * x[2]) }' ||
  fail "mf: test RMSE not below 0.8 x the global mean's: $out"
[[ $(grep -c '"kind":"eval"' "$dir/mf.jsonl") -eq 40 ]] || fail "mf: log lacks 40 eval rows"
echo "ok:   mf learns the planted ratings (test RMSE, global mean RMSE: $rmse)"
# A .json log would hold CSV: refused, and nothing is written there.
expect_one_line_error "json log" "name it .jsonl" "$train" --dataset="$dir/test.svm" \
  --log="$dir/log.json"
[[ -e "$dir/log.json" ]] && fail "a refused .json log was created"
# A diverged run is an error, not a result: neither reported nor checkpointed.
expect_one_line_error "mf diverges" "error: training diverged: parameter 0 is nan at global step 3868 (learning rate 10); lower --lr (or --weight_decay)" \
  "$train" --model=mf --dataset="$dir/ratings.csv" --rank=4 --workers=1 --epochs=2 --lr=10 \
  --checkpoint_dir="$dir/mf_diverged"
[[ ! -e $dir/mf_diverged/checkpoint.hwckpt ]] || fail "mf diverges: a checkpoint was written"
printf '1 1:1e38 2:1e38\n-1 1:1e38 2:1e38\n1 2:1e38 3:-1e38\n-1 1:-1e38 3:1e38\n' >"$dir/huge.svm"
expect_one_line_error "huge LIBSVM values diverge" "error: training diverged: parameter 1 is nan at global step 4 (learning rate 0.5); lower --lr (or --weight_decay)" \
  "$train" --dataset="$dir/huge.svm" --workers=1 --epochs=3

# Every mode trains matrix factorization, with the modes' own flags.
for run in "--mode=sync --batch_size=8" "--mode=ssp --staleness_bound=1" \
  "--mode=backup --batch_size=8 --backup_workers=1" "--mode=local_sgd --batch_size=8 --average_every=2" \
  "--mode=local_sgd --batch_size=8 --average_every=2 --outer_lr=0.7 --outer_momentum=0.9 --outer_nesterov" \
  "--mode=local_sgd --batch_size=8 --average_every=4 --fragments=2 --overlap_steps=1 --mix_alpha=0.5" \
  "--mode=async_local_sgd --average_every=4 --outer_momentum=0.9 --outer_nesterov --delayed_nesterov=2 --dynamic_local_updates"; do
  # shellcheck disable=SC2086
  out=$("$train" --model=mf --dataset="$dir/ratings.csv" --rank=4 --workers=2 --epochs=2 $run 2>&1) ||
    fail "mf $run: exit $?: $out"
  grep -q "^done: 2 epochs" <<<"$out" || fail "mf $run: no summary: $out"
done
echo "ok:   mf trains with sync, ssp, backup, local_sgd (plain, DiLoCo's outer optimizer, streaming) and async_local_sgd (delayed Nesterov, DyLU)"
# async_local_sgd's own flags: refused in the modes that do not read them, and the delayed
# Nesterov without an outer momentum (it delays the momentum's updates).
expect_one_line_error "delayed Nesterov in local_sgd mode" \
  "error: --delayed_nesterov has no effect in local_sgd mode; it is for async_local_sgd mode (--mode=async_local_sgd)" \
  "$train" --mode=local_sgd --delayed_nesterov=2
expect_one_line_error "dynamic local updates in sync mode" \
  "error: --dynamic_local_updates has no effect in sync mode; it is for async_local_sgd mode (--mode=async_local_sgd)" \
  "$train" --mode=sync --dynamic_local_updates
expect_one_line_error "delayed Nesterov without an outer momentum" \
  "error: --delayed_nesterov=4 needs an outer momentum (it delays the outer momentum's updates); give --outer_momentum" \
  "$train" --mode=async_local_sgd --delayed_nesterov=4
expect_one_line_error "streaming overlap out of range" \
  "error: --overlap_steps=4 is out of range; it must be in [0, 3]" \
  "$train" --mode=local_sgd --batch_size=8 --average_every=4 --overlap_steps=4
expect_one_line_error "staleness bound in async mode" \
  "error: --staleness_bound has no effect in async mode; it is for ssp mode (--mode=ssp)" \
  "$train" --staleness_bound=1
expect_one_line_error "fixed-point width in async mode" \
  "error: --fixed_point_bits has no effect in async mode; it is for buckwild mode of the sparse linear models (//sparse:train --mode=buckwild)" \
  "$train" --fixed_point_bits=16
expect_one_line_error "fixed-point width out of range" \
  "error: --fixed_point_bits=4 is not a model width of buckwild mode: 8 or 16" \
  "$train" --mode=buckwild --fixed_point_bits=4
expect_one_line_error "buckwild for matrix factorization" \
  "error: --mode: buckwild is not available for matrix factorization on threads: its fixed-point model is the sparse linear models' weights (sparse/buckwild.h); networks and factor matrices stay float32; use async, sync, ssp, backup, local_sgd, locked, round_robin, async_local_sgd or cyclades, or train sparse linear models with buckwild" \
  "$train" --model=mf --mode=buckwild
# Typed at its default value it is refused all the same (as //trainer:train refuses it).
expect_one_line_error "default staleness bound in async mode" \
  "error: --staleness_bound has no effect in async mode; it is for ssp mode (--mode=ssp)" \
  "$train" --staleness_bound=3
# A bad range creates nothing: no checkpoint directory, no log.
expect_one_line_error "bad bound before any file" \
  "error: --staleness_bound=-1 is out of range [0, 1099511627776]" \
  "$train" --mode=ssp --staleness_bound=-1 --checkpoint_dir="$dir/never_ckpt" --log="$dir/never.csv"
[[ ! -e "$dir/never_ckpt" && ! -e "$dir/never.csv" ]] ||
  fail "a refused --staleness_bound created the checkpoint directory or the log"
# The batch's range is the data's, also for 0, and an mf batch too large writes no log.
expect_one_line_error "batch 0" \
  "error: --batch_size=0 is out of range [1, 100000] (the training set's examples)" \
  "$train" --batch_size=0 --workers=2 --synthetic_examples=100000
expect_one_line_error "mf batch too large" \
  "error: --batch_size=1000000 is out of range [1, " \
  "$train" --model=mf --dataset="$dir/ratings.csv" --rank=4 --workers=2 --batch_size=1000000 \
  --log="$dir/never_mf.csv"
[[ ! -e "$dir/never_mf.csv" ]] || fail "a refused mf batch wrote the log"
expect_one_line_error "mf backup workers" \
  "error: --backup_workers=2 is out of range [0, 1] (fewer than the workers)" "$train" \
  --model=mf --mode=backup --workers=2 --backup_workers=2
# --batch_size reaches matrix factorization: a batch per worker of 4 ratings, one update each.
out=$("$train" --model=mf --dataset="$dir/ratings.csv" --rank=4 --workers=1 --epochs=1 \
  --batch_size=4 2>&1) || fail "mf batch: exit $?: $out"
ratings=$(sed -n 's/.* \([0-9]*\) train \/ [0-9]* test ratings)$/\1/p' <<<"$out")
grep -q "^sparse: mf rank 4, async mode, 1 worker, batch 4, " <<<"$out" &&
  grep -q "^done: 1 epoch, $(((ratings + 3) / 4)) updates in " <<<"$out" ||
  fail "mf batch: not $ratings ratings in batches of 4: $out"
echo "ok:   mf trains in batches of --batch_size"
expect_one_line_error "mf batch too large" \
  "error: --batch_size=5000 is out of range [1, $ratings] (the training set's ratings)" "$train" \
  --model=mf --dataset="$dir/ratings.csv" --workers=1 --batch_size=5000
expect_one_line_error "rank without mf" "--rank applies to --model=mf" "$train" --rank=3
printf 'u,i,r\n1,2,3\n1,x,3\n' >"$dir/bad.csv"
expect_one_line_error "bad ratings line" "bad.csv:3: item id 'x'" "$train" --model=mf \
  --dataset="$dir/bad.csv"

expect_one_line_error "workers" "--workers=0" "$train" --workers=0
expect_one_line_error "mode" "--mode: unknown mode \"hogwild\"; the modes are async, sync, ssp, backup, local_sgd, locked, round_robin, async_local_sgd, cyclades and buckwild" "$train" --mode=hogwild
expect_one_line_error "model" "--model=mlp" "$train" --model=mlp
expect_one_line_error "lr" "--lr=-1" "$train" --lr=-1
expect_one_line_error "lr_decay" "--lr_decay=2" "$train" --lr_decay=2
expect_one_line_error "batch vs data" "--batch_size=5000" "$train" --dataset="$dir/test.svm" \
  --batch_size=5000
expect_one_line_error "synthetic flag with a file" "--synthetic_nnz" "$train" \
  --dataset="$dir/test.svm" --synthetic_nnz=3
expect_one_line_error "missing file" "no such file" "$train" --dataset="$dir/none.svm"
printf '1 1:1\n-1 3:1 2:1\n' >"$dir/bad.svm"
expect_one_line_error "bad line" "bad.svm:2: index 2 after 3" "$train" --dataset="$dir/bad.svm"
expect_one_line_error "log is a directory" "--log=$dir" "$train" --log="$dir"
expect_one_line_error "positional" "unexpected argument" "$train" extra
# Empty paths are refused as train refuses them, not dropped (no log, no test set).
expect_one_line_error "empty --log" \
  "--log is empty (an unset shell variable?); give it a value or leave it out" "$train" --log=
expect_one_line_error "empty --test" "--test is empty" "$train" --dataset="$dir/train.svm.gz" --test=
expect_one_line_error "empty --checkpoint_dir" "--checkpoint_dir is empty" "$train" --checkpoint_dir=
expect_help "sparse" "--synthetic_examples" "$train"
# Under an address-space limit a failed allocation is one line and exit 1, not bad_alloc's abort.
if sanitized "$train"; then
  echo "skip: sparse under ulimit -v (a sanitizer's shadow memory needs more address space)"
else
  expect_one_line_error "sparse under ulimit -v" \
    "error: sparse/train: out of memory: an allocation failed (the machine's memory, a container limit or \`ulimit -v\` is reached)" \
    bash -c 'ulimit -v 200000 && exec "$0" --epochs=1 --synthetic_examples=2000000' "$train"
fi
# A batch per worker larger than every worker's shard is refused, as train refuses it.
expect_one_line_error "batch vs shard" \
  "--batch_size=2000 is larger than a worker's share of the training set (1500 examples = 3000 examples / 2 workers); in async mode it is the batch per worker, so it must be in [1, 1500]" \
  "$train" --dataset="$dir/train.svm.gz" --workers=2 --batch_size=2000
expect_one_line_error "flag twice" "--epochs is given twice ('--epochs=2' and '--epochs=1')" \
  "$train" --epochs=2 --epochs=1
expect_one_line_error "make_synthetic without --out" "--out" "$make_synthetic"
expect_one_line_error "make_synthetic nnz" "--nnz=0" "$make_synthetic" --nnz=0 --out="$dir/x.svm"

# Refusals that come before any data is read or banner printed (no stdout at all), naming the
# flags the user typed.
expect_no_stdout() {
  local label="$1"
  shift
  local out
  out=$("$@" 2>/dev/null) && fail "$label: exit 0"
  [[ -z $out ]] && echo "ok:   $label: nothing on stdout" || fail "$label: stdout before: $out"
}
expect_one_line_error "mf rank" "--rank=0" "$train" --model=mf --dataset="$dir/ratings.csv" --rank=0
expect_no_stdout "mf rank before loading" "$train" --model=mf --dataset="$dir/ratings.csv" --rank=0
expect_no_stdout "mf backup workers before loading" "$train" --model=mf \
  --dataset="$dir/ratings.csv" --mode=backup --workers=2 --backup_workers=2
expect_no_stdout "staleness bound before loading" "$train" --mode=ssp --staleness_bound=-1
expect_one_line_error "model list" "logreg, svm or mf" "$train" --model=foo
expect_one_line_error "synthetic flag name" "--synthetic_nnz=0" "$train" --synthetic_nnz=0
expect_one_line_error "synthetic test flag name" "--synthetic_test_examples=-1" "$train" \
  --synthetic_test_examples=-1
expect_one_line_error "mf on a LIBSVM file" "test.svm:1: looks like LIBSVM" "$train" --model=mf \
  --dataset="$dir/test.svm"

# Checkpoints: 2 epochs, then --resume to 3 continues after epoch 2 and ends where 3 epochs in
# one go end (one worker: the same final loss to the printed digit).
ck="$dir/ck"
one=(--dataset="$dir/test.svm" --workers=1 --lr_decay=0.9)
out=$("$train" "${one[@]}" --epochs=3 2>&1) || fail "3 epochs: $out"
whole=$(sed -n 's/^done: .*final train log-loss \([0-9.]*\),.*/\1/p' <<<"$out")
out=$("$train" "${one[@]}" --epochs=1 2>&1) || fail "1 epoch: $out"
grep -q "^done: 1 epoch, 500 updates in" <<<"$out" || fail "1-epoch summary: $out"
out=$("$train" "${one[@]}" --epochs=2 --checkpoint_dir="$ck" --resume 2>&1) || fail "2 epochs: $out"
grep -q "no checkpoint in $ck yet: training from the start" <<<"$out" || fail "no note: $out"
[[ -f "$ck/checkpoint.hwckpt" ]] || fail "no checkpoint file in $ck"
expect_one_line_error "checkpoint without --resume" "--resume" "$train" "${one[@]}" --epochs=3 \
  --checkpoint_dir="$ck"
expect_one_line_error "resume another mode" "mode=locked" "$train" "${one[@]}" --epochs=3 \
  --checkpoint_dir="$ck" --resume --mode=locked
out=$("$train" "${one[@]}" --epochs=3 --checkpoint_dir="$ck" --resume 2>&1) || fail "resume: $out"
grep -q "^epoch 3/3" <<<"$out" && ! grep -q "^epoch [12]/3" <<<"$out" ||
  fail "resume did not run epoch 3 alone: $out"
grep -q "resumed after epoch 2" <<<"$out" || fail "resume not reported: $out"
# The summary counts this run's updates (one epoch of 500 examples, batch 1), not the total.
grep -q "^done: epoch 3 of 3, resumed after epoch 2 from $ck: 500 updates in [0-9.]* s of SGD ([0-9]* updates/s, [0-9]* examples/s); final" <<<"$out" ||
  fail "resumed summary: $out"
resumed=$(sed -n 's/^done: .*final train log-loss \([0-9.]*\),.*/\1/p' <<<"$out")
[[ -n $whole && $whole == "$resumed" ]] && echo "ok:   resumed loss $resumed = uninterrupted" ||
  fail "resumed loss '$resumed' != uninterrupted '$whole'"
# SIGTERM: the epoch under way finishes, its checkpoint is written, exit 143; --resume continues
# after that epoch. (SIGTERM, not SIGINT: a background job of a script starts with SIGINT
# ignored, and keeps it so, as the shell convention wants.)
sig="$dir/sig"
"$train" "${one[@]}" --epochs=100000 --checkpoint_dir="$sig" >"$dir/sig.out" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -f "$sig/checkpoint.hwckpt" ]] && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
rc=$?
stopped=$(sed -n 's/^stopped early by SIGTERM after epoch \([0-9]*\);.*--resume$/\1/p' "$dir/sig.out")
[[ $rc -eq 143 && -n $stopped ]] && echo "ok:   SIGTERM stopped after epoch $stopped, exit 143" ||
  fail "SIGTERM: exit $rc, output: $(tail -3 "$dir/sig.out")"
out=$("$train" "${one[@]}" --epochs=$((stopped + 1)) --checkpoint_dir="$sig" --resume 2>&1) ||
  fail "resume after SIGTERM: $out"
grep -q "resumed after epoch $stopped " <<<"$out" || fail "resume after SIGTERM: $out"
# The same signal twice at once, as GNU timeout sends it (to the child, then to its process
# group): one stop request, not "second signal; exiting without waiting".
dup="$dir/dup"
"$train" "${one[@]}" --epochs=100000 --checkpoint_dir="$dup" >"$dir/dup.out" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -f "$dup/checkpoint.hwckpt" ]] && break; sleep 0.1; done
kill -TERM "$pid"
kill -TERM "$pid"
wait "$pid"
rc=$?
if [[ $rc -eq 143 ]] && grep -q '^stopped early by SIGTERM after epoch' "$dir/dup.out" &&
  ! grep -q "second signal" "$dir/dup.out"; then
  echo "ok:   SIGTERM twice at once stopped in order, exit 143"
else
  fail "SIGTERM twice: exit $rc, output: $(tail -3 "$dir/dup.out")"
fi
expect_one_line_error "resume without dir" "need --checkpoint_dir" "$train" --resume

# No output destroys an input or another output. A log at the name the checkpoint's temporary
# file once had keeps its rows (the temporary file has a name of its own).
tmp_log="$dir/ck_tmp_name"
mkdir -p "$tmp_log"
out=$("$train" "${one[@]}" --epochs=2 --checkpoint_dir="$tmp_log" \
  --log="$tmp_log/checkpoint.hwckpt.tmp" 2>&1) || fail "log at checkpoint.hwckpt.tmp: $out"
[[ $(wc -l <"$tmp_log/checkpoint.hwckpt.tmp" 2>/dev/null) -eq 3 ]] &&
  echo "ok:   a log at checkpoint.hwckpt.tmp keeps its 3 lines" ||
  fail "the log at $tmp_log/checkpoint.hwckpt.tmp lost its rows"
# The log over the checkpoint it resumes from (or over its data), even with --overwrite_log:
# refused, and the file is untouched.
cp "$ck/checkpoint.hwckpt" "$dir/ck_before"
expect_one_line_error "log over the checkpoint" \
  "--log=$ck/checkpoint.hwckpt is the same file as --checkpoint_dir=$ck (its file $ck/checkpoint.hwckpt); give --log another path" \
  "$train" "${one[@]}" --epochs=4 --checkpoint_dir="$ck" --resume --log="$ck/checkpoint.hwckpt" \
  --overwrite_log
cmp -s "$ck/checkpoint.hwckpt" "$dir/ck_before" || fail "the refused run changed $ck/checkpoint.hwckpt"
ln -sf "$dir/test.svm" "$dir/log_link.csv"
expect_one_line_error "log over the data (through a symlink)" \
  "--log=$dir/log_link.csv is the same file as --dataset=$dir/test.svm, which writing it would destroy; give --log another path" \
  "$train" "${one[@]}" --epochs=1 --log="$dir/log_link.csv" --overwrite_log
# A pipe that no process reads as --log: refused at once, not waited on (bounded by timeout, so
# a regression fails instead of hanging the test).
mkfifo "$dir/fifo"
expect_one_line_error "a pipe with no reader as --log" \
  "--log=$dir/fifo is a pipe that no process reads, so nothing could be written to it; start its reader first, or give a file path" \
  timeout 20 "$train" "${one[@]}" --epochs=1 --log="$dir/fifo"
# A lost standard output is an error that says so.
if [[ -w /dev/full ]]; then
  "$train" "${one[@]}" --epochs=1 >/dev/full 2>"$dir/full.err"
  rc=$?
  [[ $rc -eq 1 && $(cat "$dir/full.err") == "error: cannot write to standard output (No space left on device)" ]] &&
    echo "ok:   >/dev/full -> exit 1 naming the error" ||
    fail ">/dev/full: exit $rc, stderr: $(cat "$dir/full.err")"
fi
expect_one_line_error "checkpoint dir is a file" "not a directory" "$train" \
  --checkpoint_dir="$dir/test.svm"

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
