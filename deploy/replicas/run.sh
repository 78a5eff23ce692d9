#!/usr/bin/env bash
# Three `jrpc serve --mcp --state nats://…` instances behind nginx
# round-robin (no affinity), sharing their state through one nats-server
# with JetStream, all on this machine's loopback (docs/deployment.md).
#
#   deploy/replicas/run.sh [FLAG]...  # until Ctrl-C; then everything stops
#
# FLAGs are added to each `jrpc serve` (e.g. -v to log every call).
#
# Needs Go and nginx. It builds jrpc and nats-server (the version
# cmd/jrpc/go.mod requires) into its directory, then prints
# "ready: …" once nginx answers. Environment:
#   BASE=8080        nginx on BASE; instances on BASE+1..3 (http) and BASE+11..13 (ws)
#   NATS_PORT=4222   the NATS server's client port
#   DIR=…            where binaries, logs and JetStream's files go (default: a new
#                    temporary directory, removed on exit)
#   JRPC=…           a jrpc binary to use instead of building one
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
base=${BASE:-8080}
nats_port=${NATS_PORT:-4222}
keep=${DIR:+1}
dir=${DIR:-$(mktemp -d "${TMPDIR:-/tmp}/jrpc-replicas.XXXXXX")}
mkdir -p "$dir/bin" "$dir/nginx/logs"
chmod 755 "$dir" "$dir/nginx" # nginx's workers may run as another user

nginx=$(command -v nginx || ls /usr/sbin/nginx /usr/local/sbin/nginx 2>/dev/null | head -n1 || true)
if [ -z "$nginx" ]; then
  echo "run.sh: nginx is not installed (apt-get install -y nginx)" >&2
  exit 1
fi

pids=()
stop() {
  trap - INT TERM EXIT
  [ -f "$dir/nginx/nginx.pid" ] && kill -QUIT "$(cat "$dir/nginx/nginx.pid")" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$keep" ] || rm -rf "$dir"
}
trap stop EXIT
trap 'exit 0' INT TERM

# await PORT WHAT: wait up to 20 s for a listener on 127.0.0.1:PORT.
await() {
  for _ in $(seq 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "run.sh: $2 did not listen on 127.0.0.1:$1 (logs in $dir)" >&2
  exit 1
}

jrpc=${JRPC:-$dir/bin/jrpc}
if [ -z "${JRPC:-}" ]; then
  go build -C "$root/cmd/jrpc" -o "$dir/bin/jrpc" .
fi
go build -C "$root/cmd/jrpc" -o "$dir/bin/nats-server" github.com/nats-io/nats-server/v2

"$dir/bin/nats-server" -js -a 127.0.0.1 -p "$nats_port" -sd "$dir/jetstream" >>"$dir/nats-server.log" 2>&1 &
pids+=($!)
echo $! >"$dir/nats-server.pid"
await "$nats_port" nats-server

for i in 1 2 3; do
  "$jrpc" serve --mcp --state "nats://127.0.0.1:$nats_port" \
    --listen "http://127.0.0.1:$((base + i))/mcp" --listen "ws://127.0.0.1:$((base + 10 + i))/ws" \
    --trusted-proxy 127.0.0.1 "$@" >"$dir/jrpc-$i.log" 2>&1 &
  pids+=($!)
  echo $! >"$dir/jrpc-$i.pid"
done
for i in 1 2 3; do
  await $((base + i)) "jrpc serve $i"
  await $((base + 10 + i)) "jrpc serve $i (ws)"
done

conf=$(cat "$root/deploy/replicas/nginx.conf")
conf=${conf//127.0.0.1:8080;/127.0.0.1:$base;}
for i in 1 2 3; do
  conf=${conf//127.0.0.1:808$i /127.0.0.1:$((base + i)) }
  conf=${conf//127.0.0.1:809$i /127.0.0.1:$((base + 10 + i)) }
done
printf '%s\n' "$conf" >"$dir/nginx/nginx.conf"
"$nginx" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/logs/error.log" \
  -g "daemon off; pid $dir/nginx/nginx.pid;" &
pids+=($!)
await "$base" nginx

echo "ready: http://127.0.0.1:$base/mcp (MCP, Streamable HTTP) and ws://127.0.0.1:$base/ws; NATS on 127.0.0.1:$nats_port; logs in $dir"
# Until Ctrl-C (or SIGTERM). An instance or the NATS server that stops is
# not restarted, and the others go on (try it: docs/deployment.md).
wait
