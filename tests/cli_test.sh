#!/bin/bash
# The `train` command with bad flags: a non-zero exit and exactly one line on stderr that starts
# with "error:" and names the flag and its value. Every case points --data_dir at an empty
# directory, so a flag that were checked only after loading the dataset would fail with the
# missing-data message instead, and the case would fail.
#
# Usage (from tests/BUILD): cli_test.sh <path of //trainer:train>
set -u

train="$1"
empty_dir="${TEST_TMPDIR:-$(mktemp -d)}/empty_data_dir"
mkdir -p "$empty_dir"
failures=0
# shellcheck source=tests/expect_one_line_error.sh
source "$(dirname "$0")/expect_one_line_error.sh"

# expect_error <substring the error must contain> <flags...>
expect_error() {
  local want="$1"
  shift
  expect_one_line_error "train $*" "$want" "$train" --data_dir="$empty_dir" "$@"
}

# Flags Abseil would refuse with its own "ERROR:" line: one "error:" line naming the flag and
# what it takes, with a did-you-mean for a near miss.
expect_error "unknown flag --lerning_rate; see --help" --lerning_rate=0.1
expect_error "unknown flag --epoch; did you mean --epochs?; see --help" --epoch=2
expect_error "--epochs=abc is not an integer (default 8); see --help" --epochs=abc
expect_error "--epochs=abc is not an integer" --epochs abc
expect_error "--lr=fast is not a number" --lr=fast
expect_error "--resume=maybe is not true or false" --resume=maybe
expect_error "--checkpoint_every=5min is not a period: give a number with the unit s, m or h" \
  --checkpoint_every=5min
expect_error "--workers=0" --workers=0
expect_error "--workers=-2" --workers=-2
expect_error "'nope'" --model=nope
expect_error "--hidden=12,x" --hidden=12,x
expect_error "--batch_size=0" --batch_size=0
expect_error "--lr=-1" --lr=-1
expect_error "--momentum=1" --momentum=1
# Reported as typed, not as the float32 it rounds to (1).
expect_error "--momentum=0.999999999 is out of range" --momentum=0.999999999
expect_error "--eval_every=abc" --eval_every=abc
# Optimizers (issue 15): the name, each constant's range, constants the optimizer does not read.
expect_error "--optimizer: unknown optimizer 'adamax'; it must be one of sgd|momentum|nesterov|adam|adamw|rmsprop|adagrad" --optimizer=adamax
expect_error "--optimizer_state=both is not an optimizer state; it must be per_worker or shared" --optimizer_state=both
expect_error "--momentum=0 is out of range with optimizer momentum; it must be in (0, 1)" --optimizer=momentum
expect_error "--momentum=0 is out of range with optimizer nesterov" --optimizer=nesterov
expect_error "--adam_beta1=1 is out of range; it must be in [0, 1)" --optimizer=adam --adam_beta1=1
expect_error "--adam_beta2=-0.5 is out of range; it must be in [0, 1)" --optimizer=adam --adam_beta2=-0.5
expect_error "--rmsprop_alpha=1.5 is out of range; it must be in [0, 1)" --optimizer=rmsprop --rmsprop_alpha=1.5
expect_error "--eps=-1 is out of range; it must be finite and >= 0" --optimizer=adam --eps=-1
expect_error "--momentum=0.9 has no effect with optimizer adam" --optimizer=adam --momentum=0.9
expect_error "--adam_beta1=0.5 has no effect with optimizer sgd; it is read by adam, adamw" --adam_beta1=0.5
expect_error "--eps=1e-06 has no effect with optimizer momentum" --optimizer=momentum --momentum=0.9 --eps=1e-6
expect_error "--noweight_decay_biases has no effect without weight decay" --noweight_decay_biases
expect_error "--ema_decay=1 is out of range; it must be in [0, 1)" --ema_decay=1
expect_error "--drop_last is not available with --checkpoint_dir yet (a checkpoint does not record it, so a resume could not check its data order); train without one of the two" \
  --drop_last --checkpoint_dir="${TEST_TMPDIR:-/tmp}/drop_last_ckpt"
expect_error "--noema_num_updates has no effect without an EMA" --noema_num_updates
expect_error "--clip_global_norm=-1 is out of range; it must be finite and >= 0" --clip_global_norm=-1
expect_error "--clip_global_norm=inf is out of range" --clip_global_norm=inf
expect_error "--lr_warmup_steps=-5 is out of range; it must be in [0, 1099511627776]" --lr_warmup_steps=-5
expect_error "--lr_scaling=cubic is unknown; use none, linear or sqrt" --lr_scaling=cubic
expect_error "--lr_reference_batch=0 is out of range; it must be >= 1" --lr_scaling=linear --lr_reference_batch=0
expect_error "--lr_reference_batch=512 has no effect with --lr_scaling=none" --lr_reference_batch=512
expect_error "--optimizer_state=shared has no effect with optimizer sgd without momentum" --optimizer_state=shared
# Typed without effect, at the default value too (issue 15's tryout).
expect_error "--adam_beta1=0.9 has no effect with optimizer sgd; it is read by adam, adamw" --adam_beta1=0.9
expect_error "--adam_beta2=0.999 has no effect with optimizer rmsprop" --optimizer=rmsprop --adam_beta2=0.999
expect_error "--rmsprop_alpha=0.99 has no effect with optimizer adam; it is read by rmsprop" --optimizer=adam --rmsprop_alpha=0.99
expect_error "--eps=0 has no effect with optimizer nesterov" --optimizer=nesterov --momentum=0.9 --eps=0
expect_error "--momentum=0 has no effect with optimizer adagrad" --optimizer=adagrad --momentum=0
expect_error "--optimizer_state=per_worker has no effect with 1 worker" --optimizer=adam --workers=1 --optimizer_state=per_worker
expect_error "--optimizer_state=per_worker has no effect with optimizer sgd without momentum" --workers=2 --optimizer_state=per_worker
expect_error "--lr_reference_batch=256 has no effect with --lr_scaling=none" --lr_reference_batch=256
expect_error "--ema_num_updates=true has no effect without --ema_decay" --ema_num_updates
expect_error "--weight_decay_biases=true has no effect without --weight_decay" --weight_decay_biases
# ... and where they are read, they pass (to the missing data).
expect_error "$empty_dir" --workers=2 --optimizer=adam --adam_beta1=0.9 --eps=1e-8 --optimizer_state=per_worker --lr_scaling=linear --lr_reference_batch=64 --ema_decay=0.99 --ema_num_updates
expect_error "--lr_schedule=cosine" --lr_schedule=cosine
expect_error "--dataset=imagenet is unknown; use fashion_mnist, mnist or cifar10" --dataset=imagenet
expect_error "$empty_dir/data_batch_1.bin: missing CIFAR-10 data" --dataset=cifar10 --workers=1
expect_error "--train_examples=-1" --train_examples=-1
# Valid flags and no data: the missing file and the command that installs it.
expect_error "$empty_dir" --workers=1
expect_error "sudo apt-get install dataset-fashion-mnist" --workers=1

# --checkpoint_dir is checked before the data is read (issue 10): unusable, or holding a
# checkpoint that a run without --resume would replace.
not_a_dir="${TEST_TMPDIR:-/tmp}/ckpt_plain_file"
echo x >"$not_a_dir"
expect_error "--checkpoint_dir=$not_a_dir: exists and is not a directory" \
  --checkpoint_dir="$not_a_dir"
expect_error "--checkpoint_dir=/proc/x: cannot create the directory" --checkpoint_dir=/proc/x
damaged_dir="${TEST_TMPDIR:-/tmp}/ckpt_damaged"
mkdir -p "$damaged_dir"
echo "not a checkpoint" >"$damaged_dir/checkpoint.hwckpt"
expect_error "already holds a damaged checkpoint" --checkpoint_dir="$damaged_dir"
expect_error "use --overwrite_checkpoint to start over" --checkpoint_dir="$damaged_dir"
expect_error "--overwrite_checkpoint needs --checkpoint_dir" --overwrite_checkpoint
expect_error "--resume and --overwrite_checkpoint contradict" --resume --overwrite_checkpoint \
  --checkpoint_dir="$damaged_dir"

# Nothing typed is dropped (issue 10): positional arguments, options the build or the devices do
# not read, values float32 or Abseil would change, runs too large for memory.
expect_error "unexpected argument '128'" --hidden 128 128
expect_error "unexpected argument '0.2'" --lr 0.1 0.2
expect_error "unexpected argument '--lr=5'" -- --lr=5
expect_error "--seed=-1 is out of range; it must be an integer in [0, 18446744073709551615]" --seed -1
expect_error "--lr=1e-50 is out of range: the trainer computes in float32" --lr 1e-50
expect_error "--workers_per_device has no effect with --devices=cpu" --devices=cpu --workers_per_device=2
expect_error "--hidden has no effect with --model=cnn" --model=cnn --hidden=64
expect_error "--bn_momentum has no effect with --model=cnn" --model=cnn --bn_momentum=0.2
expect_error "--bn_momentum=0 is out of range" --model=cnn_bn --bn_momentum=0
expect_error "error: --model=cnn_bn with --batch_size=1 leaves 1 example per tower; batch norm needs at least 2 (one example has zero variance, and the model cannot learn): give --batch_size of at least 2" \
  --model=cnn_bn --workers=1 --batch_size=1
expect_error "--lr_decay_rate has no effect with --lr_schedule=constant" --lr_decay_rate=0.5
expect_error "--lr_decay_rate=1 has no effect" --lr_schedule=exponential
expect_error "--staleness_bound has no effect in async mode; it is for ssp mode (--mode=ssp)" --staleness_bound=2
expect_error "--backup_workers has no effect in async mode; it is for backup mode (--mode=backup)" --backup_workers=1
expect_error "--average_every has no effect in async mode; it is for local_sgd and async_local_sgd modes (--mode=local_sgd or async_local_sgd)" --average_every=2
expect_error "--outer_lr has no effect in sync mode; it is for local_sgd and async_local_sgd modes (--mode=local_sgd or async_local_sgd)" \
  --mode=sync --outer_lr=0.7
expect_error "--outer_lr=2.5 is out of range; it must be in (0, 2]" --mode=local_sgd --outer_lr=2.5
expect_error "--fragments has no effect in sync mode; it is for local_sgd mode (--mode=local_sgd)" \
  --mode=sync --fragments=2
expect_error "--fragments=3 is out of range; it must be in [1, 2]" --mode=local_sgd --average_every=2 \
  --fragments=3
expect_error "--mix_alpha=1 is out of range; it must be in [0, 1)" --mode=local_sgd --mix_alpha=1
# async_local_sgd's own options: refused in the modes that do not read them; the delayed Nesterov
# needs an outer momentum (it delays the momentum's updates), and the error names the flag.
expect_error "--delayed_nesterov has no effect in local_sgd mode; it is for async_local_sgd mode (--mode=async_local_sgd)" \
  --mode=local_sgd --delayed_nesterov=2
expect_error "--dynamic_local_updates has no effect in async mode; it is for async_local_sgd mode (--mode=async_local_sgd)" \
  --dynamic_local_updates
expect_error "--delayed_nesterov=4 needs an outer momentum (it delays the outer momentum's updates); give --outer_momentum" \
  --mode=async_local_sgd --delayed_nesterov=4
expect_error "--delayed_nesterov=0 is out of range; it must be in [1, 1048576]" \
  --mode=async_local_sgd --delayed_nesterov=0
expect_error "--max_delay has no effect in sync mode (its update policy does not read it); it is for async mode only" \
  --mode=sync --max_delay=3
expect_error "--max_delay=-1 is out of range; it must be in [0, 1099511627776]" --workers=2 --max_delay=-1
expect_error "--delay_adaptive_lr and --staleness_aware_lr are two rules for the same learning rate; choose one" \
  --workers=2 --delay_adaptive_lr --staleness_aware_lr
expect_error "--outer_nesterov needs --outer_momentum > 0 (Nesterov's look-ahead is along the momentum)" \
  --mode=local_sgd --outer_nesterov
expect_error "the run needs about" --devices=cpu --workers=2 --hidden=65536,65536,65536,65536,65536,65536

# A flag given twice (the last would win), flags from elsewhere or ignored, empty values (an
# unset shell variable), a boolean's value as a separate word, an option without the flag it
# serves, output paths the first save or the log would fail on.
expect_error "--lr is given twice ('--lr=0.1' and '--lr=0.2')" --lr=0.1 --lr=0.2
expect_error "--model is given twice" --model=mlp --model logreg
expect_error "--resume is given twice" --noresume --resume
expect_error "--undefok is not supported" --undefok=lrr --lrr=0.1
expect_error "--flagfile is not supported" --flagfile=/dev/null
expect_error "--checkpoint_dir is empty (an unset shell variable?)" --checkpoint_dir=
expect_error "--log is empty" --log=
expect_error "--log is empty" --log ""
expect_error "a boolean flag takes its value after '=', e.g. --resume=false" --resume false
expect_error "--log_every has no effect without --log" --log_every=5
expect_error "--stragglers=1x3 does not parse" --stragglers=1x3
expect_error "--stragglers worker=7 is out of range" --workers=2 --stragglers=7:2
expect_error "--straggler_delay probability=2 is out of range" --straggler_delay=5ms@2
expect_error "must end in .jsonl" --log="${TEST_TMPDIR:-/tmp}/run.json"
expect_error "does not exist; create it first" --log="${TEST_TMPDIR:-/tmp}/no_such_dir/run.csv"
expect_error "is the same file as --checkpoint_dir=" --checkpoint_dir="${TEST_TMPDIR:-/tmp}/ck_own" \
  --log="${TEST_TMPDIR:-/tmp}/ck_own/checkpoint.hwckpt"

# --log never replaces a previous run's log without --overwrite_log (checked before the data).
old_log="${TEST_TMPDIR:-/tmp}/previous_run.csv"
echo "wall_time_s,kind" >"$old_log"
expect_error "--log=$old_log already exists (17 bytes)" --log="$old_log"
expect_error "or --overwrite_log to replace it" --log="$old_log"
expect_error "--overwrite_log needs --log" --overwrite_log
# A refused run leaves no checkpoint directory (nor the parents made for it) behind.
expect_error "--log=$old_log already exists" --log="$old_log" \
  --checkpoint_dir="${TEST_TMPDIR:-/tmp}/made_for_ck/newck"
if [[ -e "${TEST_TMPDIR:-/tmp}/made_for_ck" ]]; then
  echo "FAIL: the refused run left ${TEST_TMPDIR:-/tmp}/made_for_ck behind"
  failures=$((failures + 1))
fi
if [[ $(cat "$old_log") != "wall_time_s,kind" ]]; then
  echo "FAIL: the refused run changed $old_log"
  failures=$((failures + 1))
fi
# With --overwrite_log the same file is accepted: the error is the missing data, not the log.
expect_error "$empty_dir" --log="$old_log" --overwrite_log

# --help succeeds (exit 0) and lists the flags; a standard output that cannot be written is a
# failure, not a silent success.
if [[ -w /dev/full ]]; then
  if "$train" --help >/dev/full 2>/dev/null; then
    echo "FAIL: train --help >/dev/full exits 0"
    failures=$((failures + 1))
  else
    echo "ok:   train --help >/dev/full -> non-zero exit"
  fi
fi

if "$train" --help >"${TEST_TMPDIR:-/tmp}/help.txt" 2>&1 && grep -q -- "--batch_size" "${TEST_TMPDIR:-/tmp}/help.txt"; then
  echo "ok:   train --help -> exit 0"
else
  echo "FAIL: train --help does not exit 0 with the flag list"
  failures=$((failures + 1))
fi

# A tiny dataset (3 images, all zeros, label 0): sizes larger than it are refused, not cut.
tiny_dir="${TEST_TMPDIR:-$(mktemp -d)}/tiny_data"
make_tiny_idx "$tiny_dir"
expect_data_error() {
  local want="$1"
  shift
  local out
  out=$("$train" --data_dir="$tiny_dir" --devices=cpu --epochs=1 "$@" 2>&1 >/dev/null)
  local rc=$?
  if [[ $rc -eq 1 && $out == error:* && $out == *"$want"* && $(wc -l <<<"$out") -eq 1 ]]; then
    echo "ok:   train $* (tiny data) -> exit $rc: $out"
  else
    echo "FAIL: train $* (tiny data): exit $rc, want 1 and one line with '$want'; got:"
    sed 's/^/    /' <<<"$out"
    failures=$((failures + 1))
  fi
}
expect_data_error "--train_examples=10 is larger than the training set: asked for the first 10 examples of fashion_mnist, which has 3; give --train_examples in [1, 3]" --workers=1 --train_examples=10
expect_data_error "--batch_size=4 is larger than a worker's share of the training set (3 examples" --workers=1 --batch_size=4
expect_data_error "--batch_size=3 is larger than a worker's share of the training set (2 examples = 3 examples / 2 workers)" --workers=2 --batch_size=3
# Under an address-space limit (ulimit -v) the memory refusal comes first: the limit counts what
# is mapped and each thread's stack and OpenBLAS buffer, not the machine's free memory. And the
# refused run ends: at these limits OpenBLAS's server thread, started as the library loads, fails
# to map its buffer and retries forever, and the exit handler that joins it hung the command
# after its error (EndCommand, core/output_path.h). Bounded by timeout, so a hang is a failure.
if sanitized "$train"; then
  echo "skip: train under ulimit -v (a sanitizer's shadow memory needs more address space)"
else
  for limit_kib in 200000 300000; do
    out=$(timeout -k 3 30 bash -c 'ulimit -v "$2" && exec "$0" --data_dir="$1" --devices=cpu --epochs=1 --workers=2 --batch_size=1' \
      "$train" "$tiny_dir" "$limit_kib" 2>&1 >/dev/null)
    rc=$?
    if [[ $rc -eq 1 && $out == error:*"of memory but only 0.0 KiB is available"* && $(wc -l <<<"$out") -eq 1 ]]; then
      echo "ok:   train under ulimit -v $limit_kib -> exit 1: $out"
    else
      echo "FAIL: train under ulimit -v $limit_kib: exit $rc (124: it hung), want 1 and the memory refusal; got:"
      sed 's/^/    /' <<<"$out"
      failures=$((failures + 1))
    fi
  done
fi
# An evaluation period in steps longer than the run, as one in epochs, is refused.
expect_data_error "--eval_every=4 is longer than the whole run (at most 3 global steps: 1 epoch of 3), so the only evaluation would be the final one; give at most 3, or 0" --workers=1 --batch_size=1 --eval_every=4
expect_data_error "--eval_every=4 is longer than the whole run" --workers=1 --batch_size=1 --eval_every=4steps

# --resume where there is no checkpoint yet trains from the start, and says so.
out=$("$train" --data_dir="$tiny_dir" --devices=cpu --workers=1 --epochs=1 --batch_size=1 \
  --resume --checkpoint_dir="${TEST_TMPDIR:-/tmp}/ck_typo" 2>&1)
if [[ $? -eq 0 && $out == *"--resume: no checkpoint in ${TEST_TMPDIR:-/tmp}/ck_typo yet; training from the start"* ]]; then
  echo "ok:   train --resume (no checkpoint yet) says it trains from the start"
else
  echo "FAIL: train --resume without a checkpoint does not say it starts afresh; output:"
  sed 's/^/    /' <<<"$out"
  failures=$((failures + 1))
fi

# A whole run on the tiny data whose summary cannot be written: exit 1 naming standard output.
if [[ -w /dev/full ]]; then
  "$train" --data_dir="$tiny_dir" --devices=cpu --workers=1 --epochs=1 --batch_size=1 \
    >/dev/full 2>"${TEST_TMPDIR:-/tmp}/full_stderr.txt"
  rc=$?
  if [[ $rc -eq 1 ]] && grep -q "cannot write to standard output" "${TEST_TMPDIR:-/tmp}/full_stderr.txt"; then
    echo "ok:   train (tiny data) >/dev/full -> exit 1 naming standard output"
  else
    echo "FAIL: train (tiny data) >/dev/full: exit $rc, want 1 and 'cannot write to standard output'; stderr:"
    sed 's/^/    /' "${TEST_TMPDIR:-/tmp}/full_stderr.txt"
    failures=$((failures + 1))
  fi
fi

# No output destroys another, and none hangs. A log that is a symlink to where the checkpoint
# will be (before there is one): refused, not written through and then renamed over.
ck_link="${TEST_TMPDIR:-/tmp}/ck_link"
ln -sfn "$ck_link/checkpoint.hwckpt" "${TEST_TMPDIR:-/tmp}/log_link.csv"
expect_one_line_error "a --log symlink to the checkpoint" \
  "--log=${TEST_TMPDIR:-/tmp}/log_link.csv is the same file as --checkpoint_dir=$ck_link (its file $ck_link/checkpoint.hwckpt); give --log another path" \
  "$train" --data_dir="$tiny_dir" --devices=cpu --workers=1 --epochs=1 --batch_size=1 \
  --checkpoint_dir="$ck_link" --log="${TEST_TMPDIR:-/tmp}/log_link.csv"
# A pipe that no process reads as --log: refused at once, not waited on (bounded by timeout, so
# a regression fails instead of hanging the test).
fifo="${TEST_TMPDIR:-/tmp}/log_fifo"
rm -f "$fifo"
mkfifo "$fifo"
expect_one_line_error "a pipe with no reader as --log" \
  "--log=$fifo is a pipe that no process reads, so nothing could be written to it; start its reader first, or give a file path" \
  timeout 20 "$train" --data_dir="$tiny_dir" --devices=cpu --workers=1 --epochs=1 --batch_size=1 \
  --log="$fifo"

# --mode picks the policy at run time (the build's mode is only the default): a tiny locked run
# trains every example once per epoch, says so, and no update is stale.
out=$("$train" --mode=locked --data_dir="$tiny_dir" --devices=cpu --workers=2 --batch_size=1 \
  --epochs=2 --lr=0.01 2>&1)
rc=$?
if [[ $rc -eq 0 && $out == *"hogwild: locked mode, 2 workers on cpu"* &&
  $out == *"6 examples, 6 steps"* && $out == *"staleness mean 0.00, max 0"* ]]; then
  echo "ok:   --mode=locked trains in locked mode"
else
  echo "FAIL: --mode=locked: exit $rc, want 0, locked mode, 6 steps and staleness 0; got:"
  sed 's/^/    /' <<<"$out"
  failures=$((failures + 1))
fi
# A tiny async_local_sgd run with the delayed Nesterov and dynamic local updates: it trains
# every example once per epoch, its global step counts every local step (3 per epoch, batch 1),
# and the banner names the outer step's rules.
out=$("$train" --mode=async_local_sgd --data_dir="$tiny_dir" --devices=cpu --workers=2 \
  --batch_size=1 --epochs=2 --lr=0.01 --average_every=2 --outer_momentum=0.9 --outer_nesterov \
  --delayed_nesterov=2 --dynamic_local_updates 2>&1)
rc=$?
if [[ $rc -eq 0 && $out == *"hogwild: async_local_sgd mode, 2 workers on cpu"* &&
  $out == *"rounds of 2 local steps, outer optimizer lr 1 momentum 0.9 (Nesterov), outer momentum updated every 2 pushes (delayed)"* &&
  $out == *"rounds by worker speed"* && $out == *"6 examples, 6 steps"* ]]; then
  echo "ok:   --mode=async_local_sgd trains with the delayed Nesterov and says so"
else
  echo "FAIL: --mode=async_local_sgd: exit $rc, want 0, the delayed Nesterov in the banner and 6 steps; got:"
  sed 's/^/    /' <<<"$out"
  failures=$((failures + 1))
fi
expect_one_line_error "--mode=hogwild" \
  "--mode: unknown mode \"hogwild\"; the modes are async, sync, ssp, backup, local_sgd, locked, round_robin, async_local_sgd, cyclades and buckwild; or the presets diloco and streaming_diloco" \
  "$train" --mode=hogwild --data_dir="$tiny_dir"

# An error about a flag a preset set says so (nobody typed --fragments here).
expect_error "--fragments=2 is out of range; it must be in [1, 1]" \
  --mode=streaming_diloco --average_every=1
expect_error "; --mode=streaming_diloco set --outer_lr=0.7 --outer_momentum=0.9 --outer_nesterov --fragments=2" \
  --mode=streaming_diloco --average_every=1
# The presets: --mode=diloco is local_sgd with DiLoCo's outer optimizer, and a flag given on the
# command line still wins over the preset's value.
for preset in "diloco|outer optimizer lr 0.7 momentum 0.9 (Nesterov)|" \
  "diloco|outer optimizer lr 0.5 momentum 0.9 (Nesterov)|--outer_lr=0.5" \
  "streaming_diloco|streaming: 2 fragments, 1-step overlap, mix 0.5|"; do
  IFS='|' read -r name want extra <<<"$preset"
  out=$("$train" --mode="$name" $extra --data_dir="$tiny_dir" --devices=cpu --workers=2 \
    --batch_size=2 --epochs=1 --lr=0.01 2>&1)
  rc=$?
  if [[ $rc -eq 0 && $out == *"hogwild: local_sgd mode, 2 workers on cpu"* && $out == *"$want"* ]]; then
    echo "ok:   --mode=$name $extra trains local_sgd with: $want"
  else
    echo "FAIL: --mode=$name $extra: exit $rc, want 0, local_sgd mode and '$want'; got:"
    sed 's/^/    /' <<<"$out"
    failures=$((failures + 1))
  fi
done

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
