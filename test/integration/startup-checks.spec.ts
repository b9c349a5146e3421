import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { LockEvent } from '../../lib/engine/lock.events.js';
import { LockStoreError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { freePort, RedisServer } from '../harness/redis-server.js';
import { errorOf } from '../harness/waits.js';
import { CapturingLogger } from '../harness/capturing-logger.js';

const engines: LockEngine[] = [];

function engine(redis: string, logger: CapturingLogger): LockEngine {
  const created = createLockEngine({ redis, logger, storeTimeout: 2_000 });
  engines.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(engines.splice(0).map((created) => created.close()));
});

describe('startup checks', () => {
  it('logs an unreachable store as an error, naming the endpoint without credentials, and still starts', async () => {
    const logger = new CapturingLogger();
    const port = await freePort();
    const locks = engine(`redis://app:s3cret@127.0.0.1:${port}`, logger);
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    const started = performance.now();

    await locks.init();
    const startupMs = performance.now() - started;
    const error = await errorOf(() => locks.acquire('k', { wait: 0 }));

    expect(logger.at('error')).toHaveLength(1);
    expect(logger.at('error')[0]!.text).toContain(`redis://127.0.0.1:${port}`);
    expect(logger.lines.map((line) => line.text).join('\n')).not.toMatch(/s3cret|app:/);
    expect(events).toContainEqual(expect.objectContaining({ type: 'store-down', atStartup: true }));
    expect(startupMs).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(LockStoreError);
  });

  it.each([
    ['allkeys-lru', true],
    ['volatile-ttl', true],
    ['noeviction', false],
  ])('with maxmemory-policy %s, warns of eviction: %s', async (policy, warns) => {
    const server = await RedisServer.start(['--maxmemory-policy', policy]);
    try {
      const logger = new CapturingLogger();
      const locks = engine(server.url, logger);
      const events: LockEvent[] = [];
      locks.events$.subscribe((event) => events.push(event));

      await locks.init();

      const warnings = logger.at('warn').filter((line) => line.text.includes('maxmemory-policy'));
      expect(warnings).toHaveLength(warns ? 1 : 0);
      if (warns)
        expect(events).toContainEqual({ type: 'unsafe-eviction', endpoint: server.url, policy });
      await (await locks.acquire('k')).release();
    } finally {
      await Promise.all(engines.splice(0).map((created) => created.close()));
      await server.stop();
    }
  });

  it('answers an out-of-memory Redis with LockStoreError, never busy, and leaves no key', async () => {
    const server = await RedisServer.start([
      '--maxmemory',
      '1mb',
      '--maxmemory-policy',
      'noeviction',
    ]);
    const filler = server.client();
    try {
      const locks = engine(server.url, new CapturingLogger());
      await locks.init();
      for (let i = 0; ; i++) {
        const full = await filler.set(`fill:${i}`, 'x'.repeat(64 * 1024)).then(
          () => false,
          () => true,
        );
        if (full) break;
      }

      const error = await errorOf(() => locks.acquire('oom', { wait: 0 }));

      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toMatch(/OOM/);
      expect(await filler.exists('lock:oom')).toBe(0);
    } finally {
      filler.disconnect();
      await Promise.all(engines.splice(0).map((created) => created.close()));
      await server.stop();
    }
  });
});
