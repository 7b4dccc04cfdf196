# Sourced by the command-line tests (cli_test.sh, simulate_cli_test.sh, study_cli_test.sh,
# sparse_cli_test.sh, predict_cli_test.sh).
#
# expect_one_line_error <label> <substring the error must contain> <command...>
# Runs the command and counts a failure (in $failures) unless it exits non-zero with exactly one
# line on stderr that starts with "error:" and contains the substring. <label> names the case.
expect_one_line_error() {
  local label="$1" want="$2"
  shift 2
  local stderr_file="${TEST_TMPDIR:-/tmp}/stderr.txt"
  "$@" >/dev/null 2>"$stderr_file"
  local rc=$?
  local lines first problem=""
  lines=$(wc -l <"$stderr_file")
  first=$(head -n 1 "$stderr_file")
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
    echo "FAIL: $label: $problem (exit code $rc); stderr was:"
    sed 's/^/    /' "$stderr_file"
    failures=$((failures + 1))
  else
    echo "ok:   $label -> exit $rc: $first"
  fi
}

# expect_help <label> <a flag the help must list> <command...>
# Runs `command --help` and counts a failure unless it exits 0 with the flag on standard output
# and nothing on standard error: help is a success in every command, as in `train`.
expect_help() {
  local label="$1" want="$2"
  shift 2
  local out_file="${TEST_TMPDIR:-/tmp}/help.txt" err_file="${TEST_TMPDIR:-/tmp}/help_err.txt"
  "$@" --help >"$out_file" 2>"$err_file"
  local rc=$?
  if [[ $rc -eq 0 && ! -s $err_file ]] && grep -q -- "$want" "$out_file"; then
    echo "ok:   $label --help -> exit 0, lists $want"
  else
    echo "FAIL: $label --help: exit $rc (want 0), stderr $(wc -c <"$err_file") bytes (want 0)," \
      "$want listed: $(grep -c -- "$want" "$out_file")"
    failures=$((failures + 1))
  fi
}

# True when the binary $1 is built with ASan or TSan: their shadow memory needs terabytes of
# address space, so a `ulimit -v` case cannot start there and is skipped.
sanitized() { grep -qa -e __asan_init -e __tsan_init "$1"; }

# Writes a tiny Fashion-MNIST-shaped dataset into folder $1: 3 images of 28x28 zeros, label 0,
# as train and t10k IDX files. Sizes larger than it are refused, not cut.
make_tiny_idx() {
  mkdir -p "$1"
  local split
  for split in train t10k; do
    { printf '\x00\x00\x08\x03\x00\x00\x00\x03\x00\x00\x00\x1c\x00\x00\x00\x1c'; head -c 2352 /dev/zero; } \
      >"$1/$split-images-idx3-ubyte"
    { printf '\x00\x00\x08\x01\x00\x00\x00\x03'; head -c 3 /dev/zero; } >"$1/$split-labels-idx1-ubyte"
  done
}
