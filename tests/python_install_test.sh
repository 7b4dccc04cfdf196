#!/usr/bin/env bash
# `bazel run //python:install -- <dir>` installs a package that /usr/bin/python3 imports from
# <dir> and trains with; a relative <dir> is taken from where the user ran bazel; no <dir> is a
# usage error. Usage: python_install_test.sh <install.sh> <__init__.py> <_hogwild.so>
set -euo pipefail
install_sh=$(realpath "$1") init=$(realpath "$2") module=$(realpath "$3")
site="$TEST_TMPDIR/site-packages"

"$install_sh" "$init" "$module" "$site" >/dev/null
test -f "$site/hogwild/__init__.py" && test -x "$site/hogwild/_hogwild.so"
cd "$TEST_TMPDIR"
PYTHONPATH="$site" /usr/bin/python3 -B - <<'PY'
import numpy as np
import hogwild
assert hogwild.__file__.endswith("site-packages/hogwild/__init__.py"), hogwild.__file__
x = np.random.default_rng(0).standard_normal((256, 8)).astype(np.float32)
result = hogwild.train(x, (x[:, 0] > 0).astype(np.int64), epochs=1, workers=1, hidden=[8])
assert result.examples == 256, result
PY

# A relative directory is relative to the user's working directory, not the runfiles.
mkdir -p "$TEST_TMPDIR/work"
BUILD_WORKING_DIRECTORY="$TEST_TMPDIR/work" "$install_sh" "$init" "$module" rel/site >/dev/null
test -f "$TEST_TMPDIR/work/rel/site/hogwild/_hogwild.so"

if "$install_sh" "$init" "$module" 2>"$TEST_TMPDIR/err"; then
  echo "FAIL: install without a directory succeeded" >&2
  exit 1
fi
grep -q "usage: bazel run //python:install -- <site-packages dir>" "$TEST_TMPDIR/err"
echo PASS
