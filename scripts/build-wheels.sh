#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds kernelhub's wheels into build/wheel/dist (docs/wheels.md): manylinux_2_28 x86_64
# wheels, one per CPython below 3.12 and one abi3 wheel (cp312-abi3) for 3.12 and later,
# each with the Python package and its extension, the kernel-builder and kernelhub programs
# (installed on PATH by pip) and the C++ API (the header, libkernelhub and the CMake package
# `kernelhub`, installed under the environment's include/ and lib/), everything linked
# statically but glibc, libstdc++ and libgcc_s. Every binary is then checked by auditwheel
# and by our own check-abi.
#
#   bash scripts/build-wheels.sh                 # cp310, cp311 and cp312-abi3
#   bash scripts/build-wheels.sh 3.11            # only the ones named (3.12 or later: the abi3
#                                                # wheel, built with that interpreter)
#
# Interpreters: python3.X on PATH, else pyenv's newest 3.X. Downloads: the Debian sources that
# scripts/wheel/sources.txt pins, and the wheel-building tools of scripts/wheel/requirements.txt
# from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Paths under the checkout hashed relative to it (as scripts/setup.sh does): a clone in another
# folder, CI's among them, takes the static dependencies' and the project's compiles from this
# machine's cache instead of compiling them all again.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
versions=("$@")
((${#versions[@]})) || versions=(3.10 3.11 3.12)
work=$root/build/wheel
dist=$work/dist
mkdir -p "$dist" "$work/raw"

find_python() {
  local version=$1 candidate
  # A pyenv shim is on PATH for every installed version but runs only the selected ones.
  if candidate=$(command -v "python$version") && "$candidate" -c "" 2>/dev/null; then
    echo "$candidate"; return
  fi
  for candidate in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}/versions/$version".* 2>/dev/null | sort -V -r); do
    if [ -x "$candidate/bin/python$version" ]; then echo "$candidate/bin/python$version"; return; fi
  done
  echo "build-wheels: no Python $version (python$version on PATH or pyenv's $version.*)" >&2
  return 1
}

bash scripts/wheel/build-deps.sh "$work/deps"
project_version=$(sed -n 's/^project(kernelhub VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

for version in "${versions[@]}"; do
  python=$(find_python "$version")
  tag=cp${version/./}
  # nanobind's STABLE_ABI builds for the limited API of 3.12 from 3.12 on: one wheel for all.
  if ((${version#3.} >= 12)); then wheel_tag=cp312-abi3; else wheel_tag=$tag-$tag; fi
  echo "build-wheels: $wheel_tag with $python" >&2
  venv=$work/venv-$tag
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
  fi
  if ! cmp -s scripts/wheel/requirements.txt "$venv/.requirements"; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r scripts/wheel/requirements.txt
    cp scripts/wheel/requirements.txt "$venv/.requirements"
  fi
  tree=$work/$tag
  # A tree configured by another cmake (Debian's, before the venv had one) is configured anew.
  if [ -f "$tree/CMakeCache.txt" ] &&
    ! grep -qx "CMAKE_COMMAND:INTERNAL=$venv/bin/cmake" "$tree/CMakeCache.txt"; then
    rm -rf "$tree/CMakeCache.txt" "$tree/CMakeFiles"
  fi
  "$venv/bin/cmake" -S . -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKERNELHUB_PORTABLE=ON \
    -DKERNELHUB_PORTABLE_DEPS="$work/deps" -DKERNELHUB_BUILD_TESTS=OFF -DKERNELHUB_BUILD_TORCH_API=ON \
    -DPython_EXECUTABLE="$venv/bin/python" -DPython3_EXECUTABLE="$venv/bin/python" \
    -Dnanobind_DIR="$("$venv/bin/python" -m nanobind --cmake_dir)" >/dev/null
  # The extension's name changes with the build (per-version or abi3): none left from another.
  rm -f "$tree"/python/kernelhub/_kernelhub*.so
  "$venv/bin/cmake" --build "$tree" --target kernel-builder kernelhub _kernelhub kernelhub_torch

  stage=$work/stage-$tag
  rm -rf "$stage"
  data=$stage/kernelhub-$project_version.data
  info=$stage/kernelhub-$project_version.dist-info
  mkdir -p "$stage/kernelhub/layer" "$data/scripts" "$info"
  cp python/kernelhub/*.py "$stage/kernelhub/"
  cp python/kernelhub/layer/*.py "$stage/kernelhub/layer/"
  cp "$tree"/python/kernelhub/_kernelhub*.so "$stage/kernelhub/"
  cp "$tree/src/kernelhub/cli/kernel-builder" "$tree/src/kernelhub/cli/kernelhub" "$data/scripts/"
  # The C++ API into the wheel's data scheme, which pip installs under the environment's prefix:
  # CMAKE_PREFIX_PATH=$VIRTUAL_ENV finds lib/cmake/kernelhub. Its library is one file named by
  # its soname (no symbolic link: a wheel holds none).
  "$venv/bin/cmake" --install "$tree" --component cxx_api --prefix "$data/data" >/dev/null
  api_lib=$(ls "$data/data/lib/libkernelhub.so."*)
  strip --strip-unneeded "$data/scripts/"* "$stage"/kernelhub/_kernelhub*.so "$api_lib"
  "$venv/bin/python" scripts/wheel/write_metadata.py --pyproject python/pyproject.toml \
    --version "$project_version" --tag "$wheel_tag-linux_x86_64" --readme README.md "$info"

  rm -f "$dist/kernelhub-$project_version-$wheel_tag-"*.whl
  "$venv/bin/python" -m wheel pack "$stage" --dest-dir "$work/raw" >/dev/null
  raw=$work/raw/kernelhub-$project_version-$wheel_tag-linux_x86_64.whl
  # Nothing to graft: repair checks the policy and retags the wheel.
  PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --plat manylinux_2_28_x86_64 \
    --wheel-dir "$dist" "$raw" >/dev/null
  wheel=$(ls "$dist/kernelhub-$project_version-$wheel_tag-"*manylinux_2_28_x86_64*.whl)
  PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" show "$wheel"
  # --python-abi 3.12: the abi3 extension may use nothing of CPython's above the limited API
  # of 3.12 (a per-version extension is not held to the limited API at all).
  "$tree/src/kernelhub/cli/kernel-builder" check-abi --manylinux manylinux_2_28 --python-abi 3.12 \
    "$stage"/kernelhub/_kernelhub*.so "$data/scripts/kernel-builder" "$data/scripts/kernelhub" \
    "$api_lib"
  echo "build-wheels: $wheel ($(du -h "$wheel" | cut -f1))" >&2
done
