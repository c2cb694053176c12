#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up a fresh Debian 12 machine for kernelhub: system packages, the .venv with torch and
# the reference packages, a build of both executables, installed into .venv/bin, and of the C++
# API, installed into .venv as the CMake package `kernelhub`.
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# The Python package's extension is the one the root build made (KERNELHUB_PREBUILT_EXTENSION,
# below). Compiled again by the package's own build, the layers missed ccache: a unity batch's
# source is a file in each build folder, and ccache hashes its path (measured cold: 1 of that
# build's 34 compiles hit; it took 159 s). CC, CXX and CCACHE_NOHASHDIR keep that build's
# compile lines the root build's where it still compiles (no root build of the extension):
# scikit-build-core would take g++ from Python's sysconfig, the root build c++, and -g puts the
# build folder in the debug info.
export CC=${CC:-cc} CXX=${CXX:-c++}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
# Paths under the checkout are hashed relative to it, so a clone in another folder (CI's, a
# second worktree) compiles nothing that this machine's cache already holds.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
step_start=$SECONDS
# step NAME: announces a step with the seconds since the set-up began (where CI time goes).
step() {
  echo "setup: $1 (after $((SECONDS - step_start)) s)"
}

apt_packages=(
  build-essential cmake ninja-build ccache pkg-config git python3-venv
  libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libfmt-dev libexpected-dev
  libcurl4-openssl-dev libssl-dev libelf-dev libgit2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  libboost1.81-dev wrk nginx-light zlib1g-dev
  # tests/e2e/test_completions.py parses the zsh and runs the fish completion scripts
  zsh fish
  libcmark-gfm-dev libcmark-gfm-extensions-dev chromium
  # tests/e2e/test_serve_lfs.py clones a served repo and fetches its LFS files with git-lfs
  git-lfs
  # tests/e2e/test_wheel.py runs the installed wheel in a sandbox that hides these libraries
  bubblewrap
)

missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  step "installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  step "creating .venv"
  "$python" -m venv .venv
fi
stamp=.venv/.requirements-installed
if [ ! -f "$stamp" ] || ! cmp -s requirements-dev.txt "$stamp"; then
  # torch and its nvidia-* wheels are about 4 GB downloaded and 6 GB installed; uv keeps the
  # unpacked wheels in its cache (~/.cache/uv) and links the .venv's files to them.
  need_gib=10
  for dir in .venv "${TMPDIR:-/tmp}"; do
    free_gib=$(($(df --output=avail -k "$dir" | tail -1) / 1024 / 1024))
    if ((free_gib < need_gib)) && [ -z "${KERNELHUB_SKIP_DISK_CHECK:-}" ]; then
      echo "setup: only ${free_gib} GiB free on the file system of $dir; installing torch and" \
        "the reference packages needs about ${need_gib} GiB (free some space, or set" \
        "KERNELHUB_SKIP_DISK_CHECK=1 to try anyway)" >&2
      exit 1
    fi
  done
  step "installing Python packages into .venv (torch and the reference packages)"
  # Through uv (from PyPI, pinned in requirements-dev.txt): it downloads in parallel and
  # installs from its cache by hard links, so a second .venv on this machine (a clone's, CI's)
  # takes 5 s where pip took 170 s downloading and unpacking every wheel again; into an empty
  # cache 29 s. Nothing writes into the installed files afterwards (they are the cache's too).
  # --compile-bytecode, as pip does by default: without the .pyc files every interpreter that
  # may not write them (PYTHONDONTWRITEBYTECODE, sandboxes) compiled torch's modules again, and
  # the suite's CPU time doubled in the files that start many (2,887 s of pytest, not 2,251 s).
  .venv/bin/pip install --quiet --disable-pip-version-check "$(grep -x 'uv==[0-9.]*' requirements-dev.txt)"
  .venv/bin/uv pip install --quiet --compile-bytecode --python .venv/bin/python \
    -r requirements-dev.txt
  cp requirements-dev.txt "$stamp"
fi

build_dir=${KERNELHUB_BUILD_DIR:-build}
# KERNELHUB_DEBUG_INFO=OFF (CI sets it): both builds at the same -O2, without -g. The debug
# info was a third of a cold set-up's compile time (the cli's largest unity batch: 60 CPU s
# with -g, 34 without); a developer's build keeps it for the debugger. Not Release's -O3:
# GCC 12 warns falsely there (-Wrestrict in libstdc++'s char_traits), which -Werror refuses.
build_type=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
python_build_type=(--config-settings=cmake.build-type=RelWithDebInfo)
if [ "${KERNELHUB_DEBUG_INFO:-ON}" = OFF ]; then
  build_type=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG"
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG")
  python_build_type=(--config-settings=cmake.build-type=Release
    "--config-settings=cmake.define.CMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG"
    "--config-settings=cmake.define.CMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG")
fi
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja "${build_type[@]}" \
    -DPython_EXECUTABLE="$root/.venv/bin/python" -DKERNELHUB_BUILD_TORCH_API=ON >/dev/null
elif ! grep -qx "CMAKE_BUILD_TYPE:STRING=${build_type[0]#-DCMAKE_BUILD_TYPE=}" \
    "$build_dir/CMakeCache.txt"; then
  cmake -S . -B "$build_dir" "${build_type[@]}" >/dev/null
fi
if ! grep -q '^KERNELHUB_BUILD_TORCH_API:BOOL=ON$' "$build_dir/CMakeCache.txt"; then
  # A build folder configured before the C++ API was part of the set-up.
  cmake -S . -B "$build_dir" -DPython_EXECUTABLE="$root/.venv/bin/python" \
    -DKERNELHUB_BUILD_TORCH_API=ON >/dev/null
fi
# KERNELHUB_WERROR=ON|OFF (CI sets ON): warnings in our code fail the build.
if [ -n "${KERNELHUB_WERROR:-}" ]; then
  cmake -S . -B "$build_dir" -DKERNELHUB_WERROR="$KERNELHUB_WERROR" >/dev/null
fi
step "building"
cmake --build "$build_dir"
# The programs into .venv/bin; the C++ API (libkernelhub, include/kernelhub/, and the CMake
# package lib/cmake/kernelhub) into .venv too, so CMAKE_PREFIX_PATH=$PWD/.venv finds it.
cmake --install "$build_dir" --prefix "$root/.venv" >/dev/null
# The `kernelhub` Python package (python/: scikit-build-core over nanobind), rebuilt
# in its own persistent build folder only when a file it is built from is newer than the stamp.
py_stamp=.venv/.kernelhub-python-installed
# The stamp holds the build type it was built with: another one builds it again.
if [ ! -f "$py_stamp" ] || [ "$(cat "$py_stamp")" != "${python_build_type[*]}" ] ||
    [ -n "$(find python src/kernelhub data cmake CMakeLists.txt \
    -path python/build -prune -o -type f -newer "$py_stamp" -print -quit)" ]; then
  step "installing the kernelhub Python package into .venv"
  # The same -Werror setting as the root build, so its compile lines (and ccache hashes) match.
  werror=()
  [ -z "${KERNELHUB_WERROR:-}" ] ||
    werror=(--config-settings=cmake.define.KERNELHUB_WERROR="$KERNELHUB_WERROR")
  # The extension the root build made (above), installed as it is: built again by the
  # package's own build, its layers would compile again (see the top of this file).
  extension=("$build_dir"/python/kernelhub/_kernelhub*.so)
  prebuilt=()
  if ((${#extension[@]} == 1)) && [ -f "${extension[0]}" ]; then
    prebuilt=(--config-settings=cmake.define.KERNELHUB_PREBUILT_EXTENSION="$(realpath "${extension[0]}")")
  fi
  .venv/bin/pip install --quiet --disable-pip-version-check --no-build-isolation \
    "${python_build_type[@]}" "${werror[@]}" "${prebuilt[@]}" ./python
  echo "${python_build_type[*]}" >"$py_stamp"
fi
step "done; kernel-builder and kernelhub are in .venv/bin"
