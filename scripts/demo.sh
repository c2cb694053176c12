#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job, end to end (README's first command runs it after scripts/setup.sh):
#   1. init a kernel project for every backend and validate it (init, check-config,
#      list-variants);
#   2. build examples/relu for this machine (cpu; cuda too where nvcc is found, as a build
#      only) and check its ABI;
#   3. start `kernelhub serve` on a throw-away root (a token file, a trusted organisation) and
#      `kernel-builder upload` the build as demo/relu, branch v1;
#   4. load it from Python with ours, `kernelhub.get_kernel`, and with the reference,
#      `kernels.get_kernel`, from the same server and cache, each compared with torch.relu;
#   5. build the C++ example examples/cpp (CMake, find_package(Torch)) and run relu_from_hub
#      against the same server, compared with torch::relu.
# Every step is covered by an end-to-end test, so CI never runs this script:
#   1  tests/e2e/test_init.py (init + check-config for every backend set),
#      tests/e2e/test_variants_parity.py (list-variants)
#   2  tests/e2e/test_build_cpu.py, tests/e2e/test_build_cuda.py,
#      tests/e2e/test_check_abi_built_variants.py
#   3  tests/e2e/test_upload.py (upload to kernelhub serve), tests/e2e/test_serve_interop.py
#      (the trusted organisation in config.toml)
#   4  tests/e2e/test_loader_hub.py (ours and the reference load what our builder uploaded)
#   5  tests/e2e/test_loader_cpp.py (examples/cpp with CMake, relu_from_hub against serve)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/.venv/bin:$PATH"
python=$root/.venv/bin/python
org=demo
repo=$org/relu
token=demo-token

work=$(mktemp -d)
server_pid=""
step="start"
finish() {
  local status=$?
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
  if [ "$status" -ne 0 ]; then
    echo "demo: FAILED at step: $step" >&2
  fi
}
trap finish EXIT

# Runs a step quietly: its output is shown only when it fails.
quiet() {
  local log="$work/step.log"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    return 1
  fi
}

begin() {
  step=$1
  echo "demo: $step"
}

begin "init a project for every backend, check-config, list-variants"
quiet kernel-builder init "$work/relu-demo" --name "$org/relu-demo" --backends all
quiet kernel-builder check-config "$work/relu-demo"
variant_count=$(kernel-builder list-variants "$work/relu-demo" | grep -c . || true)

begin "build examples/relu"
cp -r examples/relu "$work/relu"
rm -rf "$work/relu/build"
quiet kernel-builder build "$work/relu" --python "$python"
quiet kernel-builder check-abi "$work/relu"
variants=$(cd "$work/relu/build" && ls -d torch*/ | tr -d / | tr '\n' ' ')

begin "start kernelhub serve"
mkdir -p "$work/hub"
printf '[organizations.%s]\ntrustedKernelPublisher = true\n' "$org" >"$work/hub/config.toml"
printf '%s\n' "$token" >"$work/tokens"
kernelhub serve --root "$work/hub" --port 0 --token-file "$work/tokens" \
  >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
url=""
for _ in $(seq 100); do
  url=$(head -n 1 "$work/serve.out" 2>/dev/null || true)
  [[ $url == http* ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err" >&2; exit 1; }
  sleep 0.1
done
[[ $url == http* ]] || { echo "demo: kernelhub serve printed no URL" >&2; exit 1; }
# Clients of this demo talk to the local server only, through no proxy; the reference kernels
# 0.17.2 needs telemetry left on (off, it sends a user agent ending in "; " that httpx refuses).
export HF_ENDPOINT=$url HF_HUB_CACHE=$work/cache HF_HOME=$work/hf-home
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
unset HF_TOKEN HF_HUB_OFFLINE KERNELS_CACHE LOCAL_KERNELS HF_HUB_DISABLE_TELEMETRY

begin "kernel-builder upload $repo (branch v1)"
HF_TOKEN=$token quiet kernel-builder upload "$work/relu" --repo-id "$repo" --branch v1

# One interpreter per package: both import the kernel under its metadata id.
load_and_compare() {
  "$python" - "$1" "$repo" <<'PY'
import importlib, sys
import torch
package, repo = sys.argv[1], sys.argv[2]
module = importlib.import_module(package)
kernel = module.get_kernel(repo, version=1, backend="cpu")
x = torch.randn(4096)
assert torch.equal(kernel.relu(x), torch.relu(x)), f"{package}: relu differs from torch.relu"
print(f"demo: {package}.get_kernel({repo!r}, version=1) -> {kernel.__name__}: matches torch.relu")
PY
}

begin "get_kernel from Python: ours (kernelhub)"
load_and_compare kernelhub
begin "get_kernel from Python: the reference (kernels), same server and cache"
load_and_compare kernels

begin "build the C++ example (examples/cpp, CMake) and run relu_from_hub"
torch_prefix=$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
quiet cmake -S examples/cpp -B "$work/cpp" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_PREFIX_PATH=$torch_prefix;$root/.venv"
quiet cmake --build "$work/cpp" --target relu_from_hub
"$work/cpp/relu_from_hub" "$repo" 1 | sed 's/^/demo: C++ /'

step="summary"
echo "demo: ok: $variant_count buildable variants listed for a new project; built $variants;" \
  "served at $url; uploaded $repo v1; loaded by kernelhub and kernels (Python) and" \
  "relu_from_hub (C++), all matching torch"
