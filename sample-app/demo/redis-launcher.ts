import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './free-port.js';

/** A redis-server the demo started, on a free loopback port. */
export interface LaunchedRedis {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts a throwaway redis-server (no persistence) and resolves once it accepts connections. */
export async function launchRedis(extraArgs: readonly string[] = []): Promise<LaunchedRedis> {
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    ...extraArgs,
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  await waitForReady(child);
  return { port, url: `redis://127.0.0.1:${port}`, stop: () => stopChild(child) };
}

/** Makes sure redis-server exists: installs it on Debian/Ubuntu as root, else explains and exits. */
export function ensureRedisInstalled(log: (line: string) => void): void {
  if (hasRedisServer()) return;
  const debian = existsSync('/etc/debian_version');
  if (debian && process.getuid?.() === 0) {
    log(
      'redis-server is not installed; installing it with apt-get (Debian/Ubuntu, running as root)…',
    );
    const options = {
      stdio: 'inherit' as const,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    };
    spawnSync('apt-get', ['update', '-qq'], options);
    spawnSync('apt-get', ['install', '-y', '-qq', 'redis-server'], options);
    if (hasRedisServer()) return;
  }
  const hint = debian
    ? 'sudo apt-get install -y redis-server'
    : process.platform === 'darwin'
      ? 'brew install redis'
      : 'install Redis 7 with your package manager (e.g. `sudo dnf install redis`)';
  console.error(
    `redis-server is not installed and REDIS_URL is not set. Install it with:\n  ${hint}\nor point REDIS_URL at a Redis server.`,
  );
  process.exit(2);
}

function hasRedisServer(): boolean {
  const probe = spawnSync('redis-server', ['--version']);
  return !probe.error && probe.status === 0;
}

function waitForReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
  });
}

export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
