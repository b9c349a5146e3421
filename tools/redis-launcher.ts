/*
 * Starting throwaway redis-server processes on loopback: the one launcher the seckill demo, the
 * bench and the test harness share.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dyingWithParent } from './parent-death.js';

/** A free TCP port on loopback, as the OS hands it out. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Spawns a redis-server on `port` with no persistence, and resolves with it once it accepts
 * connections; rejects with its output if it exits first. Each server works in its own temporary
 * directory, removed when it exits: a replica's full sync writes an RDB file there, and a server
 * started in the caller's directory would load any dump.rdb it found.
 */
export async function spawnRedisServer(
  port: number,
  extraArgs: readonly string[] = [],
  { diesWithParent = false }: LaunchOptions = {},
): Promise<ChildProcess> {
  const dir = mkdtempSync(join(tmpdir(), `redis-${port}-`));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir];
  // No persistence; a replica's full sync starts at once instead of after 5 s.
  const quick = ['--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0'];
  const all = [...args, ...quick, ...extraArgs];
  const [command, argv] = diesWithParent
    ? dyingWithParent('redis-server', all)
    : ['redis-server', all];
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  await waitForReady(child, port);
  return child;
}

export interface LaunchOptions {
  /**
   * The server is killed with the process that started it, however that process dies (Linux;
   * see parent-death.ts): for the demos, whose launcher may be killed with kill -9.
   */
  readonly diesWithParent?: boolean;
}

/** A redis-server started on a free loopback port. */
export interface LaunchedRedis {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts a throwaway redis-server (no persistence) and resolves once it accepts connections. */
export async function launchRedis(
  extraArgs: readonly string[] = [],
  options: LaunchOptions = {},
): Promise<LaunchedRedis> {
  const port = await freePort();
  const child = await spawnRedisServer(port, extraArgs, options);
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

function waitForReady(child: ChildProcess, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (!output.includes('Ready to accept connections')) return;
      // Keep draining the pipes: a full pipe would block the server.
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.resume();
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`redis-server on port ${port} exited (${code}):\n${output}`)),
    );
  });
}

/**
 * Stops `child` with `signal`, and with SIGKILL if it has not exited within `graceMs`; resolves
 * once it has exited.
 */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 3_000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // A paused (SIGSTOPped) process would never act on the signal.
  child.kill('SIGCONT');
  child.kill(signal);
  const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(killer);
}
