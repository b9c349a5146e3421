import { spawnSync } from 'node:child_process';

// Self-contained: Jest loads global setup without the test module mapper.
export const REDIS_INSTALL_HINT =
  'redis-server was not found on PATH. Install it first: `sudo apt-get install -y redis-server` ' +
  '(Debian/Ubuntu), `brew install redis` (macOS).';

/** Fails at once, with the install command, when redis-server is missing. */
export function assertRedisInstalled(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) throw new Error(REDIS_INSTALL_HINT);
}

export default function globalSetup(): void {
  assertRedisInstalled();
}
