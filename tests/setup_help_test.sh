#!/bin/bash
# tools/setup.sh's options, without installing anything: --help prints the usage (every option)
# and exits 0; an unknown option is one line on stderr pointing to --help, exit 2, before apt runs.
#
# Usage (from tests/BUILD): setup_help_test.sh <path of tools/setup.sh>
set -u
setup="$1"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

out=$("$setup" --help 2>&1)
rc=$?
[[ $rc -eq 0 ]] || fail "--help: exit $rc: $out"
for option in --bench --mnist --movielens --help; do
  grep -q "tools/setup.sh $option" <<<"$out" || fail "--help does not list $option: $out"
done
grep -q "unknown option" <<<"$out" && fail "--help taken as unknown: $out"
err=$("$setup" --nope 2>&1 >/dev/null)
rc=$?
[[ $rc -eq 2 && $(wc -l <<<"$err") -eq 1 && $err == *"unknown option --nope"*"--help"* ]] ||
  fail "--nope: exit $rc: $err"

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
