#!/usr/bin/env bash
# Runs a Python test with Debian's /usr/bin/python3, the interpreter python/ builds the module
# for (never the first `python3` on PATH, which may be pyenv's or a virtualenv's), with the
# hogwild package from the runfiles (python/hogwild/: __init__.py and _hogwild.so) first on
# sys.path. Usage: python_test.sh <test.py> [args...]
set -euo pipefail
runfiles="${TEST_SRCDIR:-$0.runfiles}/hogwild"
export PYTHONPATH="$runfiles/python"
export PYTHONDONTWRITEBYTECODE=1  # the runfiles are links into the source tree
export MPLBACKEND=Agg             # plots go to files; there is no display
export MPLCONFIGDIR="${TEST_TMPDIR:-/tmp}/matplotlib"
exec /usr/bin/python3 "$@"
