#!/usr/bin/env bash
# Assembles the installed tree (install/tree.bzl): make_tree.sh OUT VERSION LIBRARY
# CMAKE_CONFIG_IN PKG_CONFIG_IN PUBLIC_HEADER... Run by Bazel in the execution root, where every
# project header is at its workspace path.
set -euo pipefail
out=$1 version=$2 library=$3 cmake_in=$4 pc_in=$5
shift 5
soversion=${version%%.*}

mkdir -p "$out/include/hogwild" "$out/lib/cmake/hogwild" "$out/lib/pkgconfig"
cp "$library" "$out/lib/libhogwild.so.$version"
chmod 0755 "$out/lib/libhogwild.so.$version"

# The public headers and, transitively, every project header they include ("..." includes,
# Abseil's excepted, which come from the system like the <...> ones). A header in an #if branch
# is taken too: more, never fewer.
declare -A seen=()
queue=("$@")
while ((${#queue[@]})); do
  header=${queue[0]}
  queue=("${queue[@]:1}")
  [[ -n ${seen[$header]:-} || $header == absl/* ]] && continue
  seen[$header]=1
  if [[ ! -f $header ]]; then
    echo "make_tree: $header (included by a public header) is not in the install_tree's deps;" \
      "add its cc_library there" >&2
    exit 1
  fi
  mkdir -p "$out/include/hogwild/$(dirname "$header")"
  cp "$header" "$out/include/hogwild/$header"
  while IFS= read -r included; do
    queue+=("$included")
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/p' "$header")
done

substitute() {
  sed -e "s/@VERSION@/$version/g" -e "s/@SOVERSION@/$soversion/g" "$1" >"$2"
}
substitute "$cmake_in" "$out/lib/cmake/hogwild/hogwildConfig.cmake"
substitute "$pc_in" "$out/lib/pkgconfig/hogwild.pc"
# A request for a version is satisfied by this one when the major versions agree and this one
# is not older (CMake's SameMajorVersion rule).
cat >"$out/lib/cmake/hogwild/hogwildConfigVersion.cmake" <<CMAKE
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION_MAJOR STREQUAL "$soversion"
   AND NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
elseif(NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
else()
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
CMAKE
