#!/bin/bash
# The `train` command's banner and progress on the installed Fashion-MNIST (skipped where it is
# missing): the banner names the optimizer and a non-default state kind; a resumed run says so
# before training starts and counts epochs from the checkpoint's position (a resumed 3-epoch run
# ends at "epoch 3.00/3", not at this run's 2).
#
# Usage (from tests/BUILD): cli_progress_test.sh <path of //trainer:train>
set -u

train="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
data=/usr/share/datasets/fashion-mnist
if [[ ! -e $data/train-images-idx3-ubyte && ! -e $data/train-images-idx3-ubyte.gz ]]; then
  echo "SKIP: Fashion-MNIST is not installed (sudo apt-get install dataset-fashion-mnist, or" \
    "tools/setup.sh)"
  exit 0
fi
failures=0
fail() {
  echo "FAIL: $1; output was:"
  sed 's/^/    /' "$2"
  failures=$((failures + 1))
}

common=(--model=logreg --workers=2 --train_examples=600 --optimizer=adam --optimizer_state=shared
  --checkpoint_dir="$tmp/ckpt")
"$train" "${common[@]}" --epochs=1 >"$tmp/first.txt" 2>&1 || fail "the first run failed" "$tmp/first.txt"
grep -q "^hogwild: async mode, 2 workers on cpu, optimizer adam (shared state), fashion_mnist" \
  "$tmp/first.txt" || fail "the banner does not name the optimizer and its state" "$tmp/first.txt"
grep -q "resumed from" "$tmp/first.txt" && fail "a fresh run says it resumed" "$tmp/first.txt"

# A refused resume never says it resumed.
"$train" "${common[@]}" --epochs=3 --resume --adam_beta1=0.8 >"$tmp/refused.txt" 2>&1 &&
  fail "a resume with another --adam_beta1 was not refused" "$tmp/refused.txt"
grep -q "resumed from" "$tmp/refused.txt" && fail "a refused resume says it resumed" "$tmp/refused.txt"

# --eps typed at Adam's default (1e-8) is the value the first run used (it gave none).
"$train" "${common[@]}" --epochs=3 --resume --eps=1e-8 >"$tmp/resumed.txt" 2>&1 ||
  fail "the resumed run failed" "$tmp/resumed.txt"
resumed_line=$(grep -n "^hogwild: resumed from the checkpoint at global step [0-9]* (epoch 1.00) in $tmp/ckpt" \
  "$tmp/resumed.txt" | cut -d: -f1)
first_progress=$(grep -n "^epoch " "$tmp/resumed.txt" | head -n 1 | cut -d: -f1)
if [[ -z $resumed_line || -z $first_progress || $resumed_line -ge $first_progress ]]; then
  fail "'resumed from' is not said before training (line '$resumed_line', first progress line '$first_progress')" \
    "$tmp/resumed.txt"
fi
last_progress=$(grep "^epoch " "$tmp/resumed.txt" | tail -n 1)
[[ $last_progress == "epoch 3.00/3 "* ]] ||
  fail "the last progress line is '$last_progress', want epoch 3.00/3" "$tmp/resumed.txt"

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
