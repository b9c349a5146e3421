# Sourced by the compat scripts (run-compat.sh, run-apps.sh, run-clients.sh), with a name for
# their temp dir: everything runs in that dir, outside the repo, so nothing resolves the root's
# node_modules. On the way out, by success, failure or signal, it kills the processes the script
# started (by PID, listed in `started`) and removes the dir.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
started=()

cleanup() {
  for pid in "${started[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
# Without these, a signal would end bash without running the EXIT trap.
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f s", e - s }'; }

# Packs the package into $work and sets `tgz`. CI has just built dist/ (and checked its types):
# COMPAT_BUILT=1 packs that build as it is.
pack() {
  cd "$root"
  [[ -n "${COMPAT_BUILT:-}" ]] || npm run build --silent
  tgz="$work/$(npm pack --silent --ignore-scripts --pack-destination "$work" | tail -n 1)"
}

free_port() {
  node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => {
    console.log(s.address().port); s.close(); });"
}

# Starts a throwaway redis-server on a free loopback port; sets `port` and `redis_pid`.
start_redis() {
  command -v redis-server >/dev/null || { echo "redis-server not found (apt-get install redis-server)" >&2; exit 1; }
  port="$(free_port)"
  : >"$work/redis.log" # exists before the first grep below, however fast that runs
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    >"$work/redis.log" 2>&1 </dev/null &
  redis_pid=$!
  started+=("$redis_pid")
  disown "$redis_pid" # a test's SIGKILL of it is expected: no "Killed" job notice from bash
  for _ in $(seq 100); do
    grep -q 'Ready to accept connections' "$work/redis.log" && return
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.05
  done
  cat "$work/redis.log" >&2
  echo "redis-server did not start" >&2
  exit 1
}
