#!/usr/bin/env bash
# Installs the hogwild Python package into a site-packages directory:
#
#   bazel run //python:install -- "$(/usr/bin/python3 -m site --user-site)"   # your user site
#   bazel run //python:install -- /path/to/venv/lib/python3.11/site-packages  # a virtualenv
#
# Copies hogwild/__init__.py and hogwild/_hogwild.so into <dir>/hogwild/ (creating <dir> if
# needed, replacing an earlier install). The module is built for Debian's /usr/bin/python3 and
# links the Debian libraries tools/setup.sh installs, which must stay installed.
# Bazel passes the two files' runfiles paths first; the user's directory comes last.
set -euo pipefail
init=$1 module=$2
shift 2
if [[ $# -ne 1 ]]; then
  echo "usage: bazel run //python:install -- <site-packages dir>" >&2
  echo "  e.g. bazel run //python:install -- \"\$(/usr/bin/python3 -m site --user-site)\"" >&2
  exit 2
fi
dest=$1
# `bazel run` starts in the runfiles tree; a relative path is meant from where the user is.
[[ $dest = /* ]] || dest="${BUILD_WORKING_DIRECTORY:-$PWD}/$dest"
mkdir -p "$dest/hogwild"
install -m 0644 "$init" "$dest/hogwild/__init__.py"
install -m 0755 "$module" "$dest/hogwild/_hogwild.so"
echo "installed hogwild into $dest/hogwild"
