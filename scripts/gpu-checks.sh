#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every check that needs a GPU, in one run of a few minutes (docs/gpu-checks.md). CI has no
# GPU, so nothing else runs these; a session that is lent a GPU machine runs this first:
#
#   bash scripts/gpu-checks.sh [--python PY] [--wheels DIR] [--out DIR]
#   bash scripts/gpu-checks.sh --prepare DIR     # here, before: the wheels a bare machine needs
#
# --python   the interpreter with a CUDA build of torch that sees the GPU (default: python3)
# --wheels   a folder of wheels to install first, without an index: kernelhub's (scripts/
#            build-wheels.sh) and the reference `kernels` with what it needs beyond torch
#            (tomlkit; apache-tvm-ffi for the TVM FFI example). Without it, kernelhub,
#            kernel-builder and kernels must already be there (.venv here).
# --out      where the log and the JSON summary go (default: $OUT, else build/gpu-checks)
# --prepare  on a machine with the network (this one), fills DIR for --wheels: kernelhub's
#            cp312-abi3 wheel (scripts/build-wheels.sh 3.12) and, from the package index, the
#            reference `kernels`, tomlkit and apache-tvm-ffi at requirements-dev.txt's versions,
#            for CPython 3.12 on x86_64 Linux (a lent machine's Python; docs/gpu-checks.md).
# KERNELHUB_GPU_CHECKS_KEEP=PATH keeps the work folder (the built kernels) and links it there.
#
# The checks, each run whatever the ones before it did, each a line of the summary:
#   - the machine: the GPU torch sees, its capability, nvcc;
#   - build: `kernel-builder build` of examples relu, rmsnorm, relu-torch-stable-abi and
#     relu-tvm-ffi (their cuda variants for this torch; the load check through `kernels`);
#   - check-abi: each build against manylinux_2_28 (a GPU machine's toolchain is often newer
#     than the one CI builds with);
#   - test: `kernel-builder test` of each, which picks the variant the loader would pick here
#     (it must be the cuda one) and runs the kernel's tests on the GPU;
#   - hub: `kernelhub serve`, `kernel-builder upload` of relu, then `get_kernel` without a backend
#     from ours and from the reference: each must load the cuda variant and match torch.relu on
#     CUDA tensors;
#   - kernelize: rmsnorm's RMSNorm layer bound to a CUDA module by ours and by the reference;
#   - cpp: examples/cpp's relu_from_hub (kernelhub's C++ API from the installed package, libtorch)
#     loads relu from the same server for CUDA tensors;
#   - timing (information, never a failure): rmsnorm's and relu's kernels against torch's own ops.
# Exit status: 0 when every check but the timing passed, else 1.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=python3
wheels=""
prepare=""
out=${OUT:-$root/build/gpu-checks}
while (($#)); do
  case $1 in
    --python) python=$2; shift 2 ;;
    --wheels) wheels=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --prepare) prepare=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu-checks: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ -n "$prepare" ]; then
  set -e
  mkdir -p "$prepare"
  bash scripts/build-wheels.sh 3.12
  rm -f "$prepare"/kernelhub-*.whl
  cp build/wheel/dist/kernelhub-*-cp312-abi3-*.whl "$prepare"/
  pins=$(grep -E '^(kernels|apache-tvm-ffi)==' requirements-dev.txt)
  # shellcheck disable=SC2086 # one requirement a word
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$prepare" $pins tomlkit
  ls -l "$prepare"
  exit 0
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu-checks.log
summary=$out/gpu-checks.json
: >"$log"
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  if [ -n "${KERNELHUB_GPU_CHECKS_KEEP:-}" ]; then
    echo "gpu-checks: kept $work"
    ln -sfn "$work" "$KERNELHUB_GPU_CHECKS_KEEP"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
results=()
failures=0
started=$(date +%s)

# check NAME COMMAND...: runs the command with its output in the log under a header; one line
# of the summary says whether it passed and how long it took.
check() {
  local name=$1; shift
  local begin end status
  begin=$(date +%s.%N)
  {
    echo
    echo "=== $name: $*"
  } >>"$log"
  if "$@" >>"$log" 2>&1; then
    status=pass
  else
    status=fail
    [[ $name == *"(information)"* ]] || failures=$((failures + 1))
  fi
  end=$(date +%s.%N)
  local seconds
  seconds=$(awk -v a="$begin" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  echo "=== $name: $status (${seconds} s)" >>"$log"
  echo "gpu-checks: $name: $status (${seconds} s)"
  results+=("{\"check\": \"$name\", \"status\": \"$status\", \"seconds\": $seconds}")
}

write_summary() {
  local joined
  joined=$(IFS=,; echo "${results[*]}")
  printf '{"seconds": %s, "checks": [%s]}\n' "$(($(date +%s) - started))" "$joined" >"$summary"
}

machine() {
  nvidia-smi -L
  nvcc --version | tail -n 2
  command -v cmake ninja || return 1
  "$python" - <<'PY'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda)
assert torch.cuda.is_available(), "torch sees no GPU"
print("gpu", torch.cuda.get_device_name(), "capability", torch.cuda.get_device_capability())
PY
}

# Into the interpreter's own environment, as `pip install` would: kernel-builder runs that
# interpreter isolated from PYTHONPATH, so packages beside it would not be seen by its checks.
install_wheels() {
  "$python" -m pip install -q --no-index --no-deps --no-compile --force-reinstall \
    "$wheels"/*.whl || return 1
  local scripts
  scripts=$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
  echo "$scripts" >"$work/scripts"
}

if [ -n "$wheels" ]; then
  check install install_wheels
  if [ -f "$work/scripts" ]; then
    export PATH=$(cat "$work/scripts"):$PATH
  fi
fi
prefix=$("$python" -c 'import sys; print(sys.prefix)')
check machine machine

# The kernels built here; each is copied, so the checkout's examples stay as they are.
kernels=(relu rmsnorm relu-torch-stable-abi)
if "$python" -c "import tvm_ffi" 2>/dev/null; then
  kernels+=(relu-tvm-ffi)
else
  echo "gpu-checks: tvm_ffi is not importable with $python: relu-tvm-ffi is not built"
fi

# The C++ example compiles one libtorch program for most of a minute: it starts now, beside
# the kernel builds, and is waited for before its check.
torch_prefix=$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
(
  cmake -S examples/cpp -B "$work/cpp" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_PREFIX_PATH=$torch_prefix;$prefix" && \
    cmake --build "$work/cpp" --target relu_from_hub
) >"$work/cpp.log" 2>&1 &
cpp_pid=$!

build_kernel() {
  local name=$1
  rm -rf "$work/kernels/$name"
  mkdir -p "$work/kernels"
  cp -r "examples/$name" "$work/kernels/$name"
  rm -rf "$work/kernels/$name/build"
  local begin=$SECONDS status
  # The ABI check is its own check below: a machine with a newer glibc than manylinux_2_28's
  # may fail it while the variants still load here.
  kernel-builder build "$work/kernels/$name" --python "$python" --no-sandbox --json \
    --abi-check warn
  status=$?
  echo "built in $((SECONDS - begin)) s, beside the other builds"
  return "$status"
}

# Builds run side by side (each nvcc uses the cores its job budget gives it); a check per
# kernel then reports each, with its whole log.
declare -A build_pid build_status
for name in "${kernels[@]}"; do
  build_kernel "$name" >"$work/build-$name.log" 2>&1 &
  build_pid[$name]=$!
done
for name in "${kernels[@]}"; do
  wait "${build_pid[$name]}"
  build_status[$name]=$?
done
built_log() {
  cat "$work/build-$1.log"
  return "${build_status[$1]}"
}
for name in "${kernels[@]}"; do
  check "build $name" built_log "$name"
done

for name in "${kernels[@]}"; do
  if [ "${build_status[$name]}" -eq 0 ]; then
    check "check-abi $name" kernel-builder check-abi "$work/kernels/$name"
  fi
done

# The variant `kernel-builder test` picks must be a cuda one: the loader's choice on a machine
# with a GPU.
test_kernel() {
  local name=$1
  kernel-builder test "$work/kernels/$name" --python "$python" --json >"$work/test-$name.json"
  local status=$?
  cat "$work/test-$name.json"
  [ "$status" -eq 0 ] || return "$status"
  "$python" - "$work/test-$name.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
variant = json.dumps(report)
assert report.get("passed") and "-cu" in report.get("variant", ""), \
    f"not a passing cuda variant: {variant}"
PY
}
for name in "${kernels[@]}"; do
  if [ "${build_status[$name]}" -eq 0 ]; then
    check "test $name" test_kernel "$name"
  fi
done

start_server() {
  mkdir -p "$work/hub"
  printf '[organizations.gpu]\ntrustedKernelPublisher = true\n' >"$work/hub/config.toml"
  printf 'gpu-token\n' >"$work/tokens"
  kernelhub serve --root "$work/hub" --port 0 --token-file "$work/tokens" \
    >"$work/serve.out" 2>"$work/serve.err" &
  server_pid=$!
  local url=""
  for _ in $(seq 100); do
    url=$(head -n 1 "$work/serve.out" 2>/dev/null || true)
    [[ $url == http* ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err"; return 1; }
    sleep 0.1
  done
  [[ $url == http* ]] || { echo "kernelhub serve printed no URL"; return 1; }
  echo "$url" >"$work/url"
  echo "serving at $url"
  HF_ENDPOINT=$url HF_TOKEN=gpu-token kernel-builder upload "$work/kernels/relu" \
    --repo-id gpu/relu --branch v1
}

# get_kernel with no backend: on this machine, the cuda variant; relu on CUDA tensors.
hub_load() {
  HF_ENDPOINT=$(cat "$work/url") HF_HUB_CACHE=$work/cache HF_HOME=$work/hf-home \
    "$python" - "$1" <<'PY'
import importlib, sys
from pathlib import Path
import torch
package = importlib.import_module(sys.argv[1])
kernel = package.get_kernel("gpu/relu", version=1)
variant = Path(kernel.__file__).parent.name
assert "-cu" in variant, f"{sys.argv[1]} loaded {variant}, not a cuda variant"
x = torch.randn(3, 4097, device="cuda")
y = kernel.relu(x)
assert y.is_cuda and torch.equal(y, torch.relu(x)), "relu differs from torch.relu"
print(f"{sys.argv[1]}: {kernel.__name__} from {variant} matches torch.relu on {y.device}")
PY
}

export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
unset HF_TOKEN HF_HUB_OFFLINE KERNELS_CACHE LOCAL_KERNELS HF_HUB_DISABLE_TELEMETRY
if [ "${build_status[relu]}" -eq 0 ]; then
  check "hub serve and upload relu" start_server
  if [ -f "$work/url" ]; then
    check "hub get_kernel (kernelhub)" hub_load kernelhub
    check "hub get_kernel (kernels)" hub_load kernels
  fi
fi

# rmsnorm's RMSNorm layer bound to a CUDA module by kernelize, against the module's own forward.
kernelize_rmsnorm() {
  "$python" - "$1" "$work/kernels/rmsnorm" <<'PY'
import importlib, sys
from pathlib import Path
import torch
from torch import nn
pkg = importlib.import_module(sys.argv[1])

@pkg.use_kernel_forward_from_hub("RMSNorm")
class Norm(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.variance_epsilon = 1e-6

    def forward(self, hidden_states):
        dtype = hidden_states.dtype
        states = hidden_states.float()
        states = states * torch.rsqrt(states.pow(2).mean(-1, keepdim=True) +
                                      self.variance_epsilon)
        return self.weight * states.to(dtype)

for dtype in (torch.float32, torch.bfloat16):
    torch.manual_seed(0)
    model = nn.Sequential(Norm(4096)).to("cuda", dtype)
    x = torch.randn(8, 33, 4096, device="cuda", dtype=dtype)
    with torch.no_grad():
        expected = model(x)
    with pkg.use_kernel_mapping({"RMSNorm": {"cuda": pkg.LocalLayerRepository(
            Path(sys.argv[2]), layer_name="RMSNorm")}}):
        pkg.kernelize(model, mode=pkg.Mode.INFERENCE, device="cuda")
    assert "forward" in model[0].__dict__, "kernelize left the module's forward as it was"
    with torch.no_grad():
        got = model(x)
    torch.testing.assert_close(got, expected)
    print(f"{sys.argv[1]}: kernelized RMSNorm matches on cuda, {dtype}")
PY
}
if [ "${build_status[rmsnorm]}" -eq 0 ]; then
  check "kernelize rmsnorm (kernelhub)" kernelize_rmsnorm kernelhub
  check "kernelize rmsnorm (kernels)" kernelize_rmsnorm kernels
fi

cpp_relu() {
  wait "$cpp_pid"
  local status=$?
  cat "$work/cpp.log"
  [ "$status" -eq 0 ] || return "$status"
  HF_ENDPOINT=$(cat "$work/url") HF_HUB_CACHE=$work/cache-cpp HF_HOME=$work/hf-home \
    "$work/cpp/relu_from_hub" gpu/relu 1 cuda
}
if [ -f "$work/url" ]; then
  check "cpp relu_from_hub on cuda" cpp_relu
fi

# Information only: each kernel's time per call against torch's op, CUDA events, after warm-up.
timing() {
  "$python" - "$work/kernels" <<'PY'
import sys
from pathlib import Path
import torch
import kernelhub

def per_call_us(fn, calls=200):
    for _ in range(20):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / calls

root = Path(sys.argv[1])
relu = kernelhub.get_local_kernel(root / "relu")
rms = kernelhub.get_local_kernel(root / "rmsnorm")
for rows, hidden in ((8, 4096), (4096, 4096), (16384, 8192)):
    x = torch.randn(rows, hidden, device="cuda", dtype=torch.bfloat16)
    w = torch.rand(hidden, device="cuda", dtype=torch.bfloat16) + 0.5
    ours = per_call_us(lambda: rms.rms_norm(x, w, 1e-6))
    theirs = per_call_us(lambda: torch.nn.functional.rms_norm(x, (hidden,), w, 1e-6))
    print(f"rms_norm bf16 {rows}x{hidden}: kernel {ours:.1f} us, torch {theirs:.1f} us, "
          f"torch/kernel {theirs / ours:.2f}")
    # relu's kernel takes float32 and float64 only.
    x32 = x.float()
    out = torch.empty_like(x32)
    ours = per_call_us(lambda: relu.relu(x32, out=out))
    theirs = per_call_us(lambda: torch.relu(x32))
    print(f"relu fp32 {rows}x{hidden}: kernel {ours:.1f} us, torch {theirs:.1f} us, "
          f"torch/kernel {theirs / ours:.2f}")
PY
}
if [ "${build_status[relu]}" -eq 0 ] && [ "${build_status[rmsnorm]}" -eq 0 ]; then
  check "timing (information)" timing
fi

write_summary
echo "gpu-checks: log $log, summary $summary ($(($(date +%s) - started)) s)"
[ "$failures" -eq 0 ]
