#!/usr/bin/env bash
# `bazel run //install -- <prefix>` gives a tree that a project without Bazel builds against: the
# README's C++ example, with the README's CMakeLists.txt and its Makefile, is built against the
# installed tree and run (two modes, 2000 examples, one epoch). Also: the library's SONAME and
# links, the public headers compiling from the installed include folder alone, and the README's
# example being tests/readme_example.cc (which Bazel builds).
# Usage: install_test.sh <install.sh> <tree> <version> <README.md> <readme_example.cc>
#        <public header>...
set -euo pipefail
install_sh=$(realpath "$1") tree=$(realpath "$2") version=$3 readme=$(realpath "$4")
example=$(realpath "$5")
shift 5
public_headers=("$@")
export HOME=$TEST_TMPDIR  # cmake and make read nothing of the user's
prefix="$TEST_TMPDIR/prefix"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$install_sh" "$tree" "$version" "$prefix" >/dev/null
[[ $(readlink "$prefix/lib/libhogwild.so") == libhogwild.so.${version%%.*} ]] ||
  fail "lib/libhogwild.so does not point to libhogwild.so.${version%%.*}"
[[ $(readlink "$prefix/lib/libhogwild.so.${version%%.*}") == libhogwild.so.$version ]] ||
  fail "lib/libhogwild.so.${version%%.*} does not point to libhogwild.so.$version"
soname=$(objdump -p "$prefix/lib/libhogwild.so.$version" | awk '$1 == "SONAME" {print $2}')
[[ $soname == libhogwild.so.${version%%.*} ]] || fail "SONAME is '$soname'"

# A relative prefix is relative to the user's working directory, not the runfiles; a second
# install replaces the first; no prefix is a usage error.
mkdir -p "$TEST_TMPDIR/work"
BUILD_WORKING_DIRECTORY="$TEST_TMPDIR/work" "$install_sh" "$tree" "$version" rel >/dev/null
BUILD_WORKING_DIRECTORY="$TEST_TMPDIR/work" "$install_sh" "$tree" "$version" rel >/dev/null
[[ -f $TEST_TMPDIR/work/rel/include/hogwild/trainer/trainer.h ]] ||
  fail "a relative prefix was not taken from BUILD_WORKING_DIRECTORY"
if "$install_sh" "$tree" "$version" 2>"$TEST_TMPDIR/err"; then
  fail "install without a prefix succeeded"
fi
[[ $(<"$TEST_TMPDIR/err") == "usage: bazel run //install -- <prefix>   (e.g. ~/.local or /usr/local)" ]] ||
  fail "install without a prefix said: $(<"$TEST_TMPDIR/err")"

# The fenced block of `lang` in README.md's "## Embedding the library" section.
readme_block() {
  awk -v lang="$1" '
    /^## / { in_section = ($0 == "## Embedding the library") }
    in_section && /^```/ { if (in_block) exit; if ($0 == "```" lang) { in_block = 1; next } }
    in_block { print }' "$readme"
}
readme_block cpp >"$TEST_TMPDIR/readme_example.cc"
diff -u "$example" "$TEST_TMPDIR/readme_example.cc" >&2 ||
  fail "README.md's C++ example and tests/readme_example.cc differ; make them the same"

# The public headers from the installed include folder alone: every project header they include
# is installed. (One translation unit: each header taken on its own would cost a compile each.)
printf '#include "%s"\n' "${public_headers[@]}" >"$TEST_TMPDIR/public_headers.cc"
g++ -std=c++20 -fsyntax-only -I"$prefix/include/hogwild" "$TEST_TMPDIR/public_headers.cc" \
  2>"$TEST_TMPDIR/headers.log" &
headers_pid=$!

# Both routes, each in a folder of its own outside the workspace as a user would lay it out, built
# and run side by side (the machine's cores would otherwise wait on one compiler).
run_example() {
  "$1" 2000 1 >"$1.out" 2>&1 || { cat "$1.out" >&2; fail "$1 failed"; }
  grep -q '^mode async | workers 2 |.* 2000 examples' "$1.out" &&
    grep -q '^mode sync | workers 2 |.* 2000 examples' "$1.out" ||
    { cat "$1.out" >&2; fail "$1 did not train both modes on 2000 examples"; }
}

cmake_route() {
  local dir="$TEST_TMPDIR/cmake_project"
  mkdir -p "$dir"
  cp "$TEST_TMPDIR/readme_example.cc" "$dir/"
  readme_block cmake >"$dir/CMakeLists.txt"
  cmake -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$prefix" >"$dir/log" 2>&1 &&
    cmake --build "$dir/build" >>"$dir/log" 2>&1 ||
    { cat "$dir/log" >&2; fail "the README's CMake project did not build"; }
  run_example "$dir/build/readme_example"
}

make_route() {
  local dir="$TEST_TMPDIR/make_project"
  mkdir -p "$dir"
  cp "$TEST_TMPDIR/readme_example.cc" "$dir/"
  readme_block make >"$dir/Makefile"
  make -C "$dir" PREFIX="$prefix" >"$dir/log" 2>&1 ||
    { cat "$dir/log" >&2; fail "the README's Makefile project did not build"; }
  run_example "$dir/readme_example"
}

cmake_route &
cmake_pid=$!
make_route &
make_pid=$!
status=0
wait "$cmake_pid" || status=1
wait "$make_pid" || status=1
if ! wait "$headers_pid"; then
  cat "$TEST_TMPDIR/headers.log" >&2
  fail "the public headers do not compile from the installed include folder alone"
fi
((status == 0)) || exit 1
echo PASS
