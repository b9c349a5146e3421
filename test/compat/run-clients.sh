#!/usr/bin/env bash
# Issue 43: apps with one Redis client library and no ioredis lock through a client they made
# themselves. NestJS 11 with node-redis 5 (the oldest major the peer range takes) and with Valkey
# GLIDE 2; NestJS 12 with node-redis 6 and with GLIDE 2. Each is the packed tarball installed in
# a temp dir outside the repo (so nothing resolves the root's node_modules), beside
# clients/nest1x's lockfile and the one client library, and runs clients/locks.mjs against a real
# redis-server. One npm ci per NestJS major: each client goes into a copy of that tree.
set -euo pipefail

source "$(dirname "$0")/compat-run.sh" nest-clients

echo "== client apps: pack"
pack

start_redis

# The tree of one NestJS major, from its lockfile: NestJS, rxjs, reflect-metadata, no client.
base() {
  local nest="$1" t
  t=$(now)
  mkdir "$work/$nest"
  # Copied, not symlinked: Node resolves a symlinked file's imports from its real path (the repo).
  cp "$root/test/compat/clients/$nest/"{package.json,package-lock.json} "$root/test/compat/clients/locks.mjs" "$work/$nest/"
  (cd "$work/$nest" && npm ci --no-audit --no-fund --loglevel=error </dev/null)
  echo "== $nest: npm ci in $(since "$t")"
}

# A copy of the major's tree with the tarball and one client library (`package@major`).
run() {
  local nest="$1" client="$2" package="$3" major="$4" t
  t=$(now)
  local dir="$work/$nest-$client"
  cp -a "$work/$nest" "$dir"
  cd "$dir"
  # --no-save: the lockfile stays the committed one; the client is the only thing added.
  npm install --no-save --no-audit --no-fund --loglevel=error "$tgz" "$package@$major" </dev/null
  echo "== $nest with $package $major: installed in $(since "$t")"
  # Only that client in the tree: no ioredis, nor the other client library, at any depth.
  local forbidden=(ioredis) name found
  if [[ "$client" == glide ]]; then forbidden+=(redis @redis); else forbidden+=(@valkey); fi
  for name in "${forbidden[@]}"; do
    found="$(find ./node_modules -path "*/node_modules/$name" -prune -print)"
    [[ -z "$found" ]] || { echo "$nest-$client has $name: $found" >&2; exit 1; }
  done
  echo "  ok   no ${forbidden[*]} in node_modules"
  NEST_MAJOR="${nest#nest}" COMPAT_CLIENT="$client" CLIENT_MAJOR="$major" REDIS_PORT="$port" \
    node locks.mjs </dev/null
  cd "$root"
}

base nest11
run nest11 node-redis redis 5
run nest11 glide @valkey/valkey-glide 2
base nest12
run nest12 node-redis redis 6
run nest12 glide @valkey/valkey-glide 2
echo "client apps: passed"
