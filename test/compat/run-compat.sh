#!/usr/bin/env bash
# Proves the package as `npm pack` builds it (what npm publish ships) works on NestJS 11 with
# Express and ioredis 5, the oldest majors the peerDependencies claim, against a real
# redis-server. Everything runs in a temp dir outside the repo, so nothing can resolve the
# root's node_modules (NestJS 12): the library gets its @nestjs/* from nest11/'s lockfile.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/nest11-compat.XXXXXX")"
redis_pid=""

cleanup() {
  # The app kills redis on purpose; this covers every other way out (failure, Ctrl-C).
  if [[ -n "$redis_pid" ]] && kill -0 "$redis_pid" 2>/dev/null; then
    kill -KILL "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
# Without these, a signal would end bash without running the EXIT trap.
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f s", e - s }'; }

command -v redis-server >/dev/null || { echo "redis-server not found (apt-get install redis-server)" >&2; exit 1; }

echo "== nest11 compat: build and pack"
t=$(now)
cd "$root"
# CI has just built dist/ (and checked its types): COMPAT_BUILT=1 packs that build as it is.
[[ -n "${COMPAT_BUILT:-}" ]] || npm run build --silent
tgz="$work/$(npm pack --silent --ignore-scripts --pack-destination "$work" | tail -n 1)"
echo "   packed $(basename "$tgz") in $(since "$t")"

echo "== nest11 compat: install (npm ci, then the tarball)"
t=$(now)
# Copied, not symlinked: Node resolves a symlinked file's imports from its real path (the repo).
mkdir "$work/app"
cp "$root"/test/compat/nest11/{package.json,package-lock.json,app.mjs,consumer.cjs} "$work/app/"
cd "$work/app"
npm ci --no-audit --no-fund --loglevel=error </dev/null
# --no-save: the lockfile stays the committed one; the tarball's peers are already satisfied.
npm install --no-save --no-audit --no-fund --loglevel=error "$tgz" </dev/null
echo "   installed in $(since "$t")"

echo "== nest11 compat: run against redis-server"
port="$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => {
  console.log(s.address().port); s.close(); });")"
: >"$work/redis.log" # exists before the first grep below, however fast that runs
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
  >"$work/redis.log" 2>&1 </dev/null &
redis_pid=$!
disown "$redis_pid" # the app's SIGKILL is expected: no "Killed" job notice from bash
for _ in $(seq 100); do
  grep -q 'Ready to accept connections' "$work/redis.log" && break
  kill -0 "$redis_pid" 2>/dev/null || { cat "$work/redis.log" >&2; exit 1; }
  sleep 0.05
done
grep -q 'Ready to accept connections' "$work/redis.log" || { echo "redis-server did not start" >&2; exit 1; }

echo "== nest11 compat: a CommonJS consumer, without require(esm) and with Node's defaults"
REDIS_PORT="$port" node --no-experimental-require-module consumer.cjs </dev/null
REDIS_PORT="$port" node consumer.cjs </dev/null

echo "== nest11 compat: the admin CLI, as the tarball's bin"
npx --no-install nestjs-distributed-lock --help </dev/null >/dev/null
status=0
npx --no-install nestjs-distributed-lock inspect compat:free --redis "redis://127.0.0.1:$port" \
  </dev/null || status=$?
# 1: the key is free (the documented exit codes are in docs/inspection.md).
[[ $status -eq 1 ]] || { echo "the CLI exited $status for a free key, not 1" >&2; exit 1; }

REDIS_PORT="$port" REDIS_PID="$redis_pid" node app.mjs </dev/null
