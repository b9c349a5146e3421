import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './free-port.js';

export interface RedisTarget {
  readonly url: string;
  /** Stops the throwaway server, if the demo started one. */
  stop(): Promise<void>;
}

/** `REDIS_URL` when set; otherwise a throwaway redis-server on a free loopback port. */
export async function provideRedis(log: (line: string) => void): Promise<RedisTarget> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => undefined };
  ensureRedisInstalled(log);
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForReady(child);
  log(`started redis-server on 127.0.0.1:${port} (pid ${child.pid})`);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => stopChild(child),
  };
}

function ensureRedisInstalled(log: (line: string) => void): void {
  if (hasRedisServer()) return;
  const debian = existsSync('/etc/debian_version');
  if (debian && process.getuid?.() === 0) {
    log('redis-server is not installed; installing it with apt-get (Debian/Ubuntu, running as root)…');
    const options = { stdio: 'inherit' as const, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } };
    spawnSync('apt-get', ['update', '-qq'], options);
    spawnSync('apt-get', ['install', '-y', '-qq', 'redis-server'], options);
    if (hasRedisServer()) return;
  }
  const hint = debian
    ? 'sudo apt-get install -y redis-server'
    : process.platform === 'darwin'
      ? 'brew install redis'
      : 'install Redis 6.2+ with your package manager (e.g. `sudo dnf install redis`)';
  console.error(`redis-server is not installed and REDIS_URL is not set. Install it with:\n  ${hint}\nor point REDIS_URL at a Redis server.`);
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

export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
