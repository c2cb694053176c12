#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# wrk on `resolve` of a small file: `kernelhub serve` against nginx serving the same bytes
# from a temp dir, both on 127.0.0.1. Prints both request rates and the ratio (issue 5's aim:
# the server within 2x of nginx). Needs wrk and nginx (apt: wrk nginx-light).
# Usage: bench/hub/server_wrk.sh [KERNELHUB_BIN] [DURATION_S] [CONNECTIONS] [WRK_THREADS]
set -euo pipefail
kernelhub=${1:-$(command -v kernelhub)}
duration=${2:-10}
connections=${3:-16}
threads=${4:-2}
nginx=$(command -v nginx || echo /usr/sbin/nginx)
command -v wrk >/dev/null || { echo "server_wrk: wrk is not installed (apt install wrk)" >&2; exit 2; }
[ -x "$nginx" ] || { echo "server_wrk: nginx is not installed (apt install nginx-light)" >&2; exit 2; }

work=$(mktemp -d)
chmod 755 "$work"  # nginx workers run as an unprivileged user
cleanup() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A 4 KiB file, committed through the server's own API.
head -c 4096 /dev/urandom > "$work/small.bin"
echo bench-token > "$work/tokens"
# The bench measures the server's own git read path: a binary would have to come through LFS
# (and its resolve is a redirect), so this hub stores every file in git.
mkdir -p "$work/root"
printf '[storage]\nlfs-threshold = false\n' > "$work/root/config.toml"
"$kernelhub" serve --root "$work/root" --port 0 --token-file "$work/tokens" --threads ${KH_THREADS:-64} \
  > "$work/url" 2>"$work/serve.log" &
server_pid=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(head -1 "$work/url")
curl -sf -X POST -H "Authorization: Bearer bench-token" "$url/api/repos/create" \
  -d '{"name": "k", "organization": "bench", "type": "kernel"}' >/dev/null
content=$(base64 -w0 "$work/small.bin")
printf '{"key":"header","value":{"summary":"bench"}}\n{"key":"file","value":{"path":"small.bin","encoding":"base64","content":"%s"}}\n' \
  "$content" | curl -sf -X POST -H "Authorization: Bearer bench-token" \
  --data-binary @- "$url/api/kernels/bench/k/commit/main" >/dev/null

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

path=/kernels/bench/k/resolve/main/small.bin
cmp <(curl -sf "$url$path") "$work/small.bin"
cmp <(curl -sf "http://127.0.0.1:18089$path") "$work/small.bin"

rate() {
  wrk -t"$threads" -c"$connections" -d"${duration}s" "$1" | awk '/Requests\/sec/ {print $2}'
}
ours=$(rate "$url$path")
theirs=$(rate "http://127.0.0.1:18089$path")
echo "kernelhub serve: $ours requests/s"
echo "nginx:           $theirs requests/s"
awk -v a="$theirs" -v b="$ours" 'BEGIN { printf "nginx / kernelhub = %.2f (aim: <= 2)\n", a / b }'
