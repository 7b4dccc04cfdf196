#!/usr/bin/env bash
# Installs the C++ library under a prefix, for CMake, pkg-config and plain Makefiles:
#
#   bazel run //install -- ~/.local          # or /usr/local (as root), or any folder
#
#   PREFIX/lib/libhogwild.so.X.Y.Z, and the links libhogwild.so.X (its SONAME), libhogwild.so
#   PREFIX/include/hogwild/...            the public headers (#include "trainer/trainer.h")
#   PREFIX/lib/cmake/hogwild/             find_package(hogwild CONFIG REQUIRED) -> hogwild::hogwild
#   PREFIX/lib/pkgconfig/hogwild.pc       pkg-config --cflags --libs hogwild
#
# An earlier install under PREFIX is replaced. The tree is relocatable (the CMake and pkg-config
# files find it relative to themselves). The library links the Debian libraries that
# tools/setup.sh installs, which must stay installed.
# Bazel passes the tree's runfiles path and the version first; the user's prefix comes last.
set -euo pipefail
tree=$1 version=$2
shift 2
if [[ $# -ne 1 ]]; then
  echo "usage: bazel run //install -- <prefix>   (e.g. ~/.local or /usr/local)" >&2
  exit 2
fi
prefix=$1
# `bazel run` starts in the runfiles tree; a relative path is meant from where the user is.
[[ $prefix = /* ]] || prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix"
soversion=${version%%.*}

mkdir -p "$prefix/include" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"
rm -rf "$prefix/include/hogwild" "$prefix/lib/cmake/hogwild"
cp -R "$tree/include/hogwild" "$prefix/include/hogwild"
cp -R "$tree/lib/cmake/hogwild" "$prefix/lib/cmake/hogwild"
# Bazel's outputs are read-only; an installed tree is the user's to replace or delete.
chmod -R u+w,a+rX "$prefix/include/hogwild" "$prefix/lib/cmake/hogwild"
install -m 0644 "$tree/lib/pkgconfig/hogwild.pc" "$prefix/lib/pkgconfig/hogwild.pc"
install -m 0755 "$tree/lib/libhogwild.so.$version" "$prefix/lib/libhogwild.so.$version"
ln -sfn "libhogwild.so.$version" "$prefix/lib/libhogwild.so.$soversion"
ln -sfn "libhogwild.so.$soversion" "$prefix/lib/libhogwild.so"
echo "installed hogwild $version into $prefix"
