#!/bin/bash
# The `predict` command: each bad input gets one line on stderr starting with "error:" and
# writes nothing; on the installed Fashion-MNIST (skipped where it is missing), the accuracy
# printed for a checkpoint of a short `train` run equals the run's own final test accuracy, for
# the raw and the EMA weights, and the CSV has a header and one row per test example.
#
# Usage (from tests/BUILD): predict_cli_test.sh <path of //trainer:predict> <path of //trainer:train>
set -u

predict="$1"
train="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
# shellcheck source=tests/expect_one_line_error.sh
source "$(dirname "$0")/expect_one_line_error.sh"

out="$tmp/predictions.csv"
mkdir -p "$tmp/empty"
expect_one_line_error "no --checkpoint_dir" "--checkpoint_dir is required" "$predict"
expect_one_line_error "missing directory" "--checkpoint_dir=$tmp/nope" \
  "$predict" --checkpoint_dir="$tmp/nope" --output="$out"
expect_one_line_error "no checkpoint" "holds no checkpoint" \
  "$predict" --checkpoint_dir="$tmp/empty" --output="$out"
expect_one_line_error "bad --weights" "--weights=best" \
  "$predict" --checkpoint_dir="$tmp/empty" --weights=best
expect_one_line_error "output directory missing" "$tmp/nodir" \
  "$predict" --checkpoint_dir="$tmp/empty" --output="$tmp/nodir/p.csv"
expect_one_line_error "positional argument" "unexpected argument 'extra'" \
  "$predict" --checkpoint_dir="$tmp/empty" extra
# The command line is read as train reads it: an empty path is refused, not taken for "not
# given" (--output= would write the CSV to standard output), a flag given twice is refused, and
# --help is a success.
expect_one_line_error "empty --output" \
  "--output is empty (an unset shell variable?); give it a value or leave it out" \
  "$predict" --checkpoint_dir="$tmp/empty" --output=
expect_one_line_error "empty --data_dir" "--data_dir is empty" \
  "$predict" --checkpoint_dir="$tmp/empty" --data_dir ""
expect_one_line_error "flag twice" "--split is given twice ('--split=test' and '--split=train')" \
  "$predict" --checkpoint_dir="$tmp/empty" --split=test --split=train
expect_help "predict" "--checkpoint_dir" "$predict"
# A device or a pipe is never replaced by the atomic rename, even with --overwrite.
mkfifo "$tmp/fifo"
expect_one_line_error "a pipe as --output" "is not a regular file" \
  "$predict" --checkpoint_dir="$tmp/empty" --output="$tmp/fifo" --overwrite
if [[ ! -p $tmp/fifo ]]; then
  echo "FAIL: the refused run replaced the pipe $tmp/fifo"
  failures=$((failures + 1))
fi
if [[ -e $out ]]; then
  echo "FAIL: a refused run wrote $out"
  failures=$((failures + 1))
fi

# CIFAR-10 files the test writes (4 records per batch, the pixels of label l all 60 l plus noise
# in the first row): a cnn checkpoint's accuracy reproduced.
cifar="$tmp/cifar"
mkdir -p "$cifar"
for f in data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin \
  test_batch.bin; do
  for label in 1 2 3 4; do
    printf "\\x0$label"
    head -c 32 /dev/urandom
    head -c 3040 /dev/zero | tr '\000' "\\$(printf %03o $((label * 60)))"
  done >"$cifar/$f"
done
if ! "$train" --dataset=cifar10 --data_dir="$cifar" --model=cnn --epochs=3 --workers=1 \
  --batch_size=4 --lr=0.01 --checkpoint_dir="$tmp/cifar_ckpt" >"$tmp/cifar_train.txt" 2>&1; then
  echo "FAIL: train on CIFAR-10 files:"
  cat "$tmp/cifar_train.txt"
  failures=$((failures + 1))
else
  want=$(sed -n 's/.*final test accuracy \([0-9.]*%\).*/\1/p' "$tmp/cifar_train.txt")
  got=$("$predict" --checkpoint_dir="$tmp/cifar_ckpt" --data_dir="$cifar" 2>&1 >/dev/null |
    sed -n 's/.*: accuracy \([0-9.]*%\).*/\1/p')
  if [[ -z $want || $got != "$want" ]]; then
    echo "FAIL: cifar10 cnn: predict says '$got', train said '$want'"
    failures=$((failures + 1))
  else
    echo "ok:   cifar10 cnn: accuracy $got, as train reported"
  fi
  # --output never destroys another file: the checkpoint it reads (refused, even with
  # --overwrite), a file of the user's at `<output>.tmp`, or a file a symlink there points to.
  ck="$tmp/cifar_ckpt/checkpoint.hwckpt"
  cp "$ck" "$tmp/ck_before"
  expect_one_line_error "--output over the checkpoint" \
    "--output=$ck is the same file as --checkpoint_dir=$tmp/cifar_ckpt (its file $ck), which writing it would destroy; give --output another path" \
    "$predict" --checkpoint_dir="$tmp/cifar_ckpt" --data_dir="$cifar" --output="$ck" --overwrite
  if ! cmp -s "$ck" "$tmp/ck_before"; then
    echo "FAIL: the refused run changed $ck"
    failures=$((failures + 1))
  fi
  echo "the user's own" >"$tmp/p.csv.tmp"
  echo "a symlink's target" >"$tmp/victim"
  ln -s "$tmp/victim" "$tmp/q.csv.tmp"
  for name in p q; do
    "$predict" --checkpoint_dir="$tmp/cifar_ckpt" --data_dir="$cifar" --output="$tmp/$name.csv" \
      >/dev/null 2>&1 || echo "FAIL: predict --output=$tmp/$name.csv exited $?"
  done
  if [[ $(cat "$tmp/p.csv.tmp") == "the user's own" && $(cat "$tmp/victim") == "a symlink's target" &&
    -L $tmp/q.csv.tmp && $(head -n 1 "$tmp/p.csv") == index,* && $(head -n 1 "$tmp/q.csv") == index,* ]]; then
    echo "ok:   --output leaves <output>.tmp and a symlink's target alone"
  else
    echo "FAIL: --output touched $tmp/p.csv.tmp or the target of $tmp/q.csv.tmp"
    failures=$((failures + 1))
  fi
  # A lost standard output (the summary, with --output) is an error that says so.
  if [[ -w /dev/full ]]; then
    "$predict" --checkpoint_dir="$tmp/cifar_ckpt" --data_dir="$cifar" --output="$tmp/r.csv" \
      >/dev/full 2>"$tmp/full.err"
    rc=$?
    if [[ $rc -eq 1 && $(cat "$tmp/full.err") == "error: cannot write to standard output (No space left on device)" ]]; then
      echo "ok:   predict >/dev/full -> exit 1 naming the error"
    else
      echo "FAIL: predict >/dev/full: exit $rc, stderr: $(cat "$tmp/full.err")"
      failures=$((failures + 1))
    fi
  fi
fi

data=/usr/share/datasets/fashion-mnist
if [[ ! -e $data/train-images-idx3-ubyte && ! -e $data/train-images-idx3-ubyte.gz ]]; then
  echo "SKIP the end-to-end cases: Fashion-MNIST is not installed (sudo apt-get install" \
    "dataset-fashion-mnist, or tools/setup.sh)"
else
  ckpt="$tmp/ckpt"
  "$train" --workers=2 --epochs=1 --train_examples=3000 --ema_decay=0.9 \
    --checkpoint_dir="$ckpt" >"$tmp/train.txt" 2>&1 || {
    echo "FAIL: train exited $?:"
    cat "$tmp/train.txt"
    exit 1
  }
  raw=$(sed -n 's/.*final test accuracy \([0-9.]*%\).*/\1/p' "$tmp/train.txt")
  ema=$(sed -n 's/^EMA weights: test accuracy \([0-9.]*%\).*/\1/p' "$tmp/train.txt")
  for weights in raw ema; do
    want=$raw
    [[ $weights == ema ]] && want=$ema
    csv="$tmp/$weights.csv"
    if ! "$predict" --checkpoint_dir="$ckpt" --weights=$weights --output="$csv" \
      >"$tmp/predict.txt" 2>&1; then
      echo "FAIL: predict --weights=$weights:"
      cat "$tmp/predict.txt"
      failures=$((failures + 1))
      continue
    fi
    got=$(sed -n 's/.*: accuracy \([0-9.]*%\).*/\1/p' "$tmp/predict.txt")
    if [[ -z $want || $got != "$want" ]]; then
      echo "FAIL: $weights weights: predict says '$got', train said '$want'"
      failures=$((failures + 1))
    else
      echo "ok:   $weights weights: accuracy $got, as train reported"
    fi
    rows=$(wc -l <"$csv")
    if [[ $rows -ne 10001 || $(head -n 1 "$csv") != "index,predicted_class,p0,p1,p2,p3,p4,p5,p6,p7,p8,p9" ]]; then
      echo "FAIL: $csv has $rows lines (want a header and 10000 rows), header $(head -n 1 "$csv")"
      failures=$((failures + 1))
    fi
  done
  expect_one_line_error "existing output" "--overwrite" \
    "$predict" --checkpoint_dir="$ckpt" --output="$tmp/raw.csv"
  "$train" --workers=1 --epochs=1 --train_examples=200 --checkpoint_dir="$tmp/no_ema" \
    >/dev/null 2>&1 || echo "FAIL: the run without EMA failed"
  expect_one_line_error "EMA from a checkpoint without" "--weights=ema" \
    "$predict" --checkpoint_dir="$tmp/no_ema" --weights=ema --output="$tmp/x.csv"
  expect_one_line_error "missing data files" "$tmp/empty" \
    "$predict" --checkpoint_dir="$ckpt" --data_dir="$tmp/empty" --output="$tmp/x.csv"
  expect_one_line_error "another dataset" "error: --dataset=fashion_mnist: $tmp/cifar_ckpt/checkpoint.hwckpt was trained on cifar10; leave out --dataset and give the --data_dir of its training set, or pass --allow_other_dataset to predict on this one anyway" \
    "$predict" --checkpoint_dir="$tmp/cifar_ckpt" --dataset=fashion_mnist --output="$tmp/x.csv"
  expect_one_line_error "images of another shape" "examples of shape 1x28x28; the checkpoint's model cnn takes 3x32x32" \
    "$predict" --checkpoint_dir="$tmp/cifar_ckpt" --dataset=fashion_mnist --allow_other_dataset \
    --output="$tmp/x.csv"
  if [[ -e $tmp/x.csv ]]; then
    echo "FAIL: a refused run wrote $tmp/x.csv"
    failures=$((failures + 1))
  fi
  # Under `bazel run`, a relative --output is relative to where bazel run was typed.
  mkdir -p "$tmp/typed_here"
  BUILD_WORKING_DIRECTORY="$tmp/typed_here" "$predict" --checkpoint_dir="$ckpt" \
    --output=relative.csv >/dev/null 2>&1
  if [[ -s $tmp/typed_here/relative.csv ]]; then
    echo "ok:   a relative --output lands in BUILD_WORKING_DIRECTORY"
  else
    echo "FAIL: a relative --output did not land in BUILD_WORKING_DIRECTORY ($tmp/typed_here)"
    failures=$((failures + 1))
  fi
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
