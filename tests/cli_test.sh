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

# expect_error <substring the error must contain> <flags...>
expect_error() {
  local want="$1"
  shift
  local stderr_file="${TEST_TMPDIR:-/tmp}/stderr.txt"
  "$train" --data_dir="$empty_dir" "$@" >/dev/null 2>"$stderr_file"
  local rc=$?
  local lines
  lines=$(wc -l <"$stderr_file")
  local first
  first=$(head -n 1 "$stderr_file")
  local problem=""
  if [[ $rc -eq 0 ]]; then
    problem="exit code 0"
  elif [[ $lines -ne 1 ]]; then
    problem="stderr has $lines lines, want 1"
  elif [[ $first != error:* ]]; then
    problem="stderr does not start with 'error:'"
  elif [[ $first != *"$want"* ]]; then
    problem="stderr does not mention '$want'"
  fi
  if [[ -n $problem ]]; then
    echo "FAIL: train $* --data_dir=<empty>: $problem (exit code $rc); stderr was:"
    sed 's/^/    /' "$stderr_file"
    failures=$((failures + 1))
  else
    echo "ok:   train $* -> exit $rc: $first"
  fi
}

expect_error "--workers=0" --workers=0
expect_error "--workers=-2" --workers=-2
expect_error "'nope'" --model=nope
expect_error "--hidden=12,x" --hidden=12,x
expect_error "--batch_size=0" --batch_size=0
expect_error "--lr=-1" --lr=-1
expect_error "--momentum=1" --momentum=1
expect_error "--eval_every=abc" --eval_every=abc
expect_error "--lr_schedule=cosine" --lr_schedule=cosine
expect_error "--dataset=cifar10" --dataset=cifar10
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

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
