import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { promisify } from 'node:util';
import { runCli } from '../../lib/cli/cli-run.js';
import type { LockEngineConfig } from '../../lib/engine/lock-engine.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';

const redis = useRedisServer();

/** Runs the CLI in this process; resolves its exit code and what it printed. */
async function cli(...args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    args,
    { REDIS_URL: redis.server.url },
    {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
    },
  );
  return { code, out, err };
}

afterEach(() => redis.probe.flushall());

describe('the admin CLI', () => {
  it('inspects a lock as a table and as JSON, and says a free key is free (exit 1)', async () => {
    const engine = createTestEngine(redis.client, {
      instanceId: 'api-1',
    } as Partial<LockEngineConfig>);
    await engine.init();
    const lock = await engine.acquire('order:42', { fencing: true, ttl: 10_000 });

    const table = await cli('inspect', 'order:42');
    expect(table.code).toBe(0);
    expect(table.out).toEqual(
      expect.arrayContaining([
        'key      order:42',
        'kind     mutex',
        `fence    ${lock.fence}`,
        'holders  1',
        'waiters  none in the waiter list',
      ]),
    );
    // No SINCE column: Redis keeps no time a lease began (renewals re-arm the same expiry).
    expect(table.out.some((line) => /^ {2}OWNER\s+MODE\s+TTL$/.test(line))).toBe(true);
    const holderLine = new RegExp(`^  ${hostname()}:${process.pid} api-1\\s+-\\s+[\\d.]+s$`);
    expect(table.out.some((line) => holderLine.test(line))).toBe(true);

    const json = await cli('inspect', 'order:42', '--json');
    expect(JSON.parse(json.out.join('\n'))).toMatchObject({
      key: 'order:42',
      kind: 'mutex',
      holders: [{ owner: { pid: process.pid, instanceId: 'api-1' } }],
    });

    expect(await cli('inspect', 'order:43')).toMatchObject({
      code: 1,
      out: ['"order:43" is free.'],
    });
    await lock.release();
    await engine.close();
  });

  it('lists as a JSON array, with --prefix, and exits 1 when nothing matches', async () => {
    await redis.probe.set('app:a', 'token-of-a-foreign-owner', 'PX', 10_000);
    const listed = await cli('list', '--prefix', 'app:', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out.join('\n'))).toEqual([
      {
        key: 'a',
        kind: 'mutex',
        holderCount: 1,
        ttl: expect.any(Number),
        holder: { process: 'token-of' },
      },
    ]);
    expect(await cli('list', 'b*', '--prefix', 'app:')).toMatchObject({
      code: 1,
      out: ['No held lock matches.'],
    });
  });

  it('releases only with --force (exit 2 without), then finds the key free (exit 1)', async () => {
    await redis.probe.set('lock:stuck', 'someone', 'PX', 60_000);
    const refused = await cli('release', 'stuck');
    expect(refused.code).toBe(2);
    expect(refused.err[0]).toMatch(/--force/);
    expect(await redis.probe.exists('lock:stuck')).toBe(1);

    expect((await cli('release', 'stuck', '--force')).code).toBe(0);
    expect(await redis.probe.exists('lock:stuck')).toBe(0);
    expect((await cli('release', 'stuck', '--force')).code).toBe(1);
  });

  it('exits 2 on a bad command line, 3 when Redis is unreachable, 4 when Redis refuses', async () => {
    expect((await cli('frobnicate')).code).toBe(2);
    expect((await cli('inspect')).code).toBe(2);
    expect((await cli('list', '--bogus')).code).toBe(2);
    expect((await cli('inspect', 'a\x1fb')).code).toBe(2);
    expect((await cli('--help')).code).toBe(0);
    expect((await cli('-h')).code).toBe(0);
    // No command is a usage error: the help goes to stderr, exit 2, as documented.
    const bare = await cli();
    expect(bare).toMatchObject({ code: 2, out: [] });
    expect(bare.err.join('\n')).toMatch(/^Usage: nestjs-distributed-lock/m);

    const closedPort = `redis://127.0.0.1:${redis.server.port + 1}`;
    const unreachable = await cli('inspect', 'x', '--redis', closedPort, '--timeout', '500');
    expect(unreachable.code).toBe(3);
    expect(unreachable.err[0]).toMatch(/Cannot reach Redis/);

    // One slash: ioredis would read a socket path, and its error would quote the password.
    const mistyped = await cli('list', '--redis', `redis:/:s3cr3t@127.0.0.1:${redis.server.port}`);
    expect(mistyped.code).toBe(2);
    expect(mistyped.err.join('\n')).toMatch(/--redis \(or REDIS_URL\) is not a Redis URL/);
    expect([...mistyped.out, ...mistyped.err].join('\n')).not.toMatch(/s3cr3t/);

    await redis.probe.call('ACL', 'SETUSER', 'viewer', 'on', '>secret', '~*', '+@connection');
    const url = `redis://viewer:secret@127.0.0.1:${redis.server.port}`;
    const refused = await cli('inspect', 'x', '--redis', url);
    expect(refused.code).toBe(4);
    expect(refused.err.join('\n')).toMatch(/NOPERM/);
    expect(refused.err.join('\n')).not.toMatch(/secret/);
    await redis.probe.call('ACL', 'DELUSER', 'viewer');
  });

  it('runs as the package bin: a node script with a shebang, exit code and all', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin).toEqual({ 'nestjs-distributed-lock': './dist/cli/main.js' });
    expect(readFileSync('lib/cli/main.ts', 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    const run = promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'lib/cli/main.ts', 'inspect', 'nothing-here'],
      { env: { ...process.env, NODE_OPTIONS: '', REDIS_URL: redis.server.url } },
    );
    await expect(run).rejects.toMatchObject({ code: 1, stdout: '"nothing-here" is free.\n' });
  });

  describe('as a process: --timeout is the longest wait', () => {
    const main = 'dist/cli/main.js';
    let silent: Server;
    let silentPort: number;
    const sockets = new Set<Socket>();
    /** Node's start and exit with the CLI's modules loaded, measured below: the allowance. */
    let allowance: number;

    /** Runs the built CLI; resolves its exit code and its wall time in ms. */
    function run(...args: string[]): Promise<{ code: number | null; ms: number; err: string }> {
      const started = performance.now();
      const child = spawn(process.execPath, [main, ...args], {
        env: { ...process.env, NODE_OPTIONS: '' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      return new Promise((resolve) =>
        child.once('exit', (code) => resolve({ code, ms: performance.now() - started, err })),
      );
    }

    beforeAll(async () => {
      if (!existsSync(main)) throw new Error(`${main} is missing: npm run build first`);
      // Accepts connections and reads them, and never answers.
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('data', () => undefined);
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      silentPort = (silent.address() as { port: number }).port;
      // The slowest of 3 runs of --help (same modules, no Redis), tripled, and at least 1 s: a
      // generous bound on start and exit on a loaded machine.
      const helps = [];
      for (let i = 0; i < 3; i++) helps.push((await run('--help')).ms);
      allowance = Math.max(1_000, 3 * Math.max(...helps));
    });

    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });

    it('exits 3 within --timeout (1000 ms) for a server that accepts and never answers', async () => {
      const run1 = await run(
        'inspect',
        'x',
        '--redis',
        `redis://127.0.0.1:${silentPort}`,
        '--timeout',
        '1000',
      );
      expect(run1.code).toBe(3);
      expect(run1.err).toMatch(/no answer within 1000 ms/);
      expect(run1.ms).toBeGreaterThanOrEqual(1_000);
      expect(run1.ms).toBeLessThan(1_000 + allowance);
    });

    it('exits 3 within the default --timeout (5000 ms) for the same server', async () => {
      const run5 = await run('list', '--redis', `redis://127.0.0.1:${silentPort}`);
      expect(run5.code).toBe(3);
      expect(run5.ms).toBeLessThan(5_000 + allowance);
    }, 15_000);

    it('exits 3 at once for a refused connection, not after the timeout', async () => {
      const closedPort = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as { port: number };
          probe.close(() => resolve(port));
        });
      });
      const refused = await run('inspect', 'x', '--redis', `redis://127.0.0.1:${closedPort}`);
      expect(refused.code).toBe(3);
      expect(refused.err).toMatch(/Cannot reach Redis/);
      expect(refused.ms).toBeLessThan(allowance);
    });
  });
});
