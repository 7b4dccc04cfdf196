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
if [[ -e $out ]]; then
  echo "FAIL: a refused run wrote $out"
  failures=$((failures + 1))
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
  if [[ -e $tmp/x.csv ]]; then
    echo "FAIL: a refused run wrote $tmp/x.csv"
    failures=$((failures + 1))
  fi
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
