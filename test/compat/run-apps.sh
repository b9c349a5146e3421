#!/usr/bin/env bash
# Installs the packed library into apps laid out as `nest new` makes them, and runs each app's
# own test suites against a real redis-server:
# - nest11-cjs-app: NestJS 11, CommonJS, Jest with ts-jest as generated; built with tsc and served
#   under `node --no-experimental-require-module`, the behaviour of Node 20 before 20.19;
# - nest12-esm-app: NestJS 12, ESM, vitest, from `nest new` of @nestjs/cli 12; built with
#   `nest build` and served with Node's defaults.
# Each keeps its scaffold's lint set-up (11: eslint with typescript-eslint's type-checked rules and
# prettier; 12: oxlint --type-aware, and prettier for formatting), under which the README's
# complete app, pasted in as src/readme-app.ts, must pass as the apps' own files do.
set -euo pipefail

source "$(dirname "$0")/compat-run.sh" nest-apps

echo "== nest apps: pack"
pack

start_redis
export REDIS_URL="redis://127.0.0.1:$port"

# The first TypeScript block after "## A complete app" in the README: what users paste.
readme_app() {
  node -e "const text = require('node:fs').readFileSync(process.argv[1], 'utf8');
    const start = text.indexOf('\`\`\`ts\n', text.indexOf('## A complete app')) + 6;
    process.stdout.write(text.slice(start, text.indexOf('\`\`\`\n', start)));" "$root/README.md"
}

# The app's own `npm run lint` and its prettier settings, over its files and the README's app.
# Nest 11's script ends in --fix, which would rewrite a badly formatted file and pass: it runs
# here without it. Nest 12's lint is oxlint, and prettier is its formatter: checked as well.
lint_app() {
  local app="$1"
  readme_app >src/readme-app.ts
  if [[ "$app" == nest11-* ]]; then
    npx --no-install eslint '{src,apps,libs,test}/**/*.ts' </dev/null
  else
    npm run lint --silent </dev/null
  fi
  npx --no-install prettier --check 'src/**/*.ts' 'test/**/*.ts' </dev/null
  rm src/readme-app.ts
  echo "  ok   $app: the README's complete app passes the app's own lint and formatting"
}

run_app() {
  local app="$1" node_flags="$2"
  echo "== $app: install (npm ci, then the tarball)"
  cp -r "$root/test/compat/$app" "$work/$app"
  cd "$work/$app"
  npm ci --no-audit --no-fund --loglevel=error </dev/null
  npm install --no-save --no-audit --no-fund --loglevel=error "$tgz" </dev/null

  echo "== $app: its lint, with the README's complete app in it"
  lint_app "$app"

  echo "== $app: its unit tests (LockTestingModule) and e2e tests (Redis)"
  npm test --silent </dev/null
  npm run test:e2e --silent </dev/null

  echo "== $app: built, then served (node $node_flags)"
  npm run build --silent </dev/null
  local app_port answer status
  app_port="$(free_port)"
  # shellcheck disable=SC2086 # the flags are words
  PORT="$app_port" node $node_flags dist/main </dev/null >"$work/$app.log" 2>&1 &
  app_pid=$!
  started+=("$app_pid")
  disown "$app_pid"
  for _ in $(seq 100); do
    answer="$(curl -s "http://127.0.0.1:$app_port/" || true)"
    [[ "$answer" == "Hello World!" ]] && break
    kill -0 "$app_pid" 2>/dev/null || { cat "$work/$app.log" >&2; exit 1; }
    sleep 0.1
  done
  [[ "$answer" == "Hello World!" ]] || { echo "$app did not answer" >&2; cat "$work/$app.log" >&2; exit 1; }
  status="$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$app_port/orders/1")"
  [[ "$status" == "201" ]] || { echo "$app: POST /orders/1 answered $status" >&2; exit 1; }
  kill -TERM "$app_pid"
  echo "  ok   $app serves a locked endpoint (node $node_flags)"
}

run_app nest11-cjs-app --no-experimental-require-module
run_app nest12-esm-app --enable-source-maps
echo "nest apps: passed"
