#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# wrk on `resolve` of a small file: `kernelhub serve` against nginx serving the same bytes
# from a temp dir, all on 127.0.0.1. Prints each request rate and the ratio kernelhub / nginx
# (issue 25's goal: >= 1.0, kernelhub at least as fast as nginx). Needs wrk and nginx
# (apt: wrk nginx-light).
# Usage: bench/hub/server_wrk.sh [KERNELHUB_BIN] [DURATION_S] [CONNECTIONS] [WRK_THREADS]
# Environment:
#   KH_THREADS   the servers' --threads (default 64)
#   KH_BASELINE  a second kernelhub binary (say main's build copied to /tmp before a change),
#                measured in the same run, in turn with the first and nginx
#   KH_ROUNDS    rounds (default 1); each measures kernelhub and the baseline (their order
#                swapped every other round), then nginx, and prints the load average before it
set -euo pipefail
kernelhub=${1:-$(command -v kernelhub)}
duration=${2:-10}
connections=${3:-16}
threads=${4:-2}
baseline=${KH_BASELINE:-}
rounds=${KH_ROUNDS:-1}
nginx=$(command -v nginx || echo /usr/sbin/nginx)
command -v wrk >/dev/null || { echo "server_wrk: wrk is not installed (apt install wrk)" >&2; exit 2; }
[ -x "$nginx" ] || { echo "server_wrk: nginx is not installed (apt install nginx-light)" >&2; exit 2; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "server_wrk: KH_BASELINE=$baseline is not an executable" >&2; exit 2; }

work=$(mktemp -d)
chmod 755 "$work"  # nginx workers run as an unprivileged user
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A 4 KiB file, committed through each server's own API.
head -c 4096 /dev/urandom > "$work/small.bin"
echo bench-token > "$work/tokens"
path=/kernels/bench/k/resolve/main/small.bin

# start_hub NAME BINARY: a server on a root of its own (a root takes one server), serving the
# file; prints its URL.
start_hub() {
  local name=$1 binary=$2 dir="$work/$1"
  # The bench measures the server's own git read path: a binary would have to come through
  # LFS (and its resolve is a redirect), so this hub stores every file in git.
  mkdir -p "$dir/root"
  printf '[storage]\nlfs-threshold = false\n' > "$dir/root/config.toml"
  "$binary" serve --root "$dir/root" --port 0 --token-file "$work/tokens" \
    --threads "${KH_THREADS:-64}" > "$dir/url" 2>"$dir/serve.log" &
  pids+=($!)
  for _ in $(seq 50); do [ -s "$dir/url" ] && break; sleep 0.1; done
  local url
  url=$(head -1 "$dir/url")
  curl -sf -X POST -H "Authorization: Bearer bench-token" "$url/api/repos/create" \
    -d '{"name": "k", "organization": "bench", "type": "kernel"}' >/dev/null
  local content
  content=$(base64 -w0 "$work/small.bin")
  printf '{"key":"header","value":{"summary":"bench"}}\n{"key":"file","value":{"path":"small.bin","encoding":"base64","content":"%s"}}\n' \
    "$content" | curl -sf -X POST -H "Authorization: Bearer bench-token" \
    --data-binary @- "$url/api/kernels/bench/k/commit/main" >/dev/null
  cmp <(curl -sf "$url$path") "$work/small.bin"
  echo "$url"
}

ours_url=$(start_hub ours "$kernelhub")
base_url=
if [ -n "$baseline" ]; then
  base_url=$(start_hub baseline "$baseline")
fi

mkdir -p "$work/www/kernels/bench/k/resolve/main"
cp "$work/small.bin" "$work/www/kernels/bench/k/resolve/main/small.bin"
cat > "$work/nginx.conf" <<NGINX
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  keepalive_requests 100000;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  server { listen 127.0.0.1:18089; root $work/www; }
}
NGINX
mkdir -p "$work/tmp"
"$nginx" -c "$work/nginx.conf"
sleep 0.5
nginx_url=http://127.0.0.1:18089
cmp <(curl -sf "$nginx_url$path") "$work/small.bin"
# The server keeps a branch's commit only once its ref is 2 s old (repository_ref_cache.hpp);
# the commit above was just made, and a hub's branches mostly stand still.
sleep 2

rate() {
  wrk -t"$threads" -c"$connections" -d"${duration}s" "$1" | awk '/Requests\/sec/ {print $2}'
}
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
}

echo "resolve of a 4 KiB file: wrk ${duration} s, $connections connections, $threads wrk threads," \
  "server --threads ${KH_THREADS:-64}"
[ -n "$baseline" ] && echo "kernelhub: $kernelhub; baseline: $baseline"
for round in $(seq "$rounds"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  # The two builds swap places every round, so neither always runs right after nginx.
  if [ -n "$baseline" ] && [ $((round % 2)) -eq 0 ]; then
    base=$(rate "$base_url$path")
    ours=$(rate "$ours_url$path")
  else
    ours=$(rate "$ours_url$path")
    [ -z "$baseline" ] || base=$(rate "$base_url$path")
  fi
  theirs=$(rate "$nginx_url$path")
  echo "round $round (load average $load):"
  echo "  kernelhub serve: $ours requests/s"
  [ -n "$baseline" ] && echo "  baseline:        $base requests/s"
  echo "  nginx:           $theirs requests/s"
  echo "  kernelhub / nginx = $(ratio "$ours" "$theirs") (goal: >= 1.0)"
  if [ -n "$baseline" ]; then
    echo "  baseline / nginx = $(ratio "$base" "$theirs"); kernelhub / baseline = $(ratio "$ours" "$base")"
  fi
done
