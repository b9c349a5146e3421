#!/usr/bin/env bash
# Proves the package as `npm pack` builds it (what npm publish ships) works on NestJS 11 with
# Express and ioredis 5, the oldest majors the peerDependencies claim, against a real
# redis-server. Everything runs in a temp dir outside the repo, so nothing can resolve the
# root's node_modules (NestJS 12): the library gets its @nestjs/* from nest11/'s lockfile.
set -euo pipefail

source "$(dirname "$0")/compat-run.sh" nest11-compat

echo "== nest11 compat: build and pack"
t=$(now)
pack
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
start_redis

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
