import { hostname } from 'node:os';
import type { LockEngineConfig } from '../../lib/engine/lock-engine.js';
import { PROCESS_ID } from '../../lib/engine/request/lock-request.js';
import { LockKeyError, LockOptionsError } from '../../lib/errors/lock.errors.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory-lock.store.js';
import { registrationKeyOf } from '../../lib/stores/redis/owner-registry.js';
import { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store.js';
import type { LockSummary } from '../../lib/stores/lock-inspection.interface.js';
import { Test } from '@nestjs/testing';
import { runCli } from '../../lib/cli/cli-run.js';
import { LockModule } from '../../lib/nest/lock.module.js';
import { LockService } from '../../lib/nest/lock.service.js';
import { CapturingLogger } from '../harness/capturing-logger.js';
import { ChildWorker, killLiveWorkers } from '../harness/child-workers.js';
import { callsBetween, commandCalls } from '../harness/command-stats.js';
import { createTestEngine, engineOn } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import type { InspectionWorkerConfig } from '../fixtures/inspection-worker.js';

const redis = useRedisServer({ beforeStop: killLiveWorkers });
const me = { host: hostname(), pid: process.pid, instanceId: 'test-process' };

function testEngine() {
  return createTestEngine(redis.client, { instanceId: me.instanceId } as Partial<LockEngineConfig>);
}

function worker(role: InspectionWorkerConfig['role'], key: string): ChildWorker {
  const config: InspectionWorkerConfig = {
    role,
    port: redis.server.port,
    key,
    ttl: 3_000,
    instanceId: `${role}-worker`,
  };
  return ChildWorker.spawn('inspection-worker', config, role);
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const found: T[] = [];
  for await (const item of items) found.push(item);
  return found;
}

afterEach(() => redis.probe.flushall());

describe('a lock held by another process', () => {
  it('is shown with its pid, host and falling ttl; forceRelease frees it for a waiter elsewhere at once, and the holder loses it', async () => {
    const engine = testEngine();
    const holder = worker('holder', 'job');
    const waiter = worker('waiter', 'job');
    try {
      await Promise.all([holder.next('ready', 8_000), waiter.next('ready', 8_000)]);
      holder.send({ type: 'start' });
      waiter.send({ type: 'start' });
      holder.send({ type: 'acquire' });
      await holder.next('held', 5_000);

      const first = await engine.inspections.inspect('job');
      const firstAt = performance.now();
      expect(first).toMatchObject({ key: 'job', kind: 'mutex', holderCount: 1 });
      expect(first!.holders[0].owner).toMatchObject({
        host: hostname(),
        pid: holder.pid,
        instanceId: 'holder-worker',
      });
      expect(first!.holders[0].ttl).toBeLessThanOrEqual(3_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = await engine.inspections.inspect('job');
      const elapsed = performance.now() - firstAt;
      // Renewal comes at a third of the ttl (1 s): the lease only ran down in between.
      const fell = first!.holders[0].ttl - second!.holders[0].ttl;
      expect(fell).toBeGreaterThan(elapsed - 50);
      expect(fell).toBeLessThan(elapsed + 50);

      // The admin CLI's list names the child too.
      const lines: string[] = [];
      const io = {
        out: (line: string) => lines.push(line),
        err: (line: string) => lines.push(line),
      };
      expect(await runCli(['list', '--redis', redis.server.url], {}, io)).toBe(0);
      expect(lines[0]).toMatch(/^KEY\s+KIND\s+HOLDERS\s+TTL\s+HOLDER$/);
      expect(lines[1]).toMatch(
        new RegExp(`^job\\s+mutex\\s+1\\s+[\\d.]+s\\s+${hostname()}:${holder.pid} holder-worker$`),
      );

      waiter.send({ type: 'acquire' });
      await until(async () => {
        const found = await engine.inspections.inspect('job');
        return found?.waiters.some((each) => each.owner?.pid === waiter.pid) ?? false;
      });

      const releasedAt = Date.now();
      expect(await engine.inspections.forceRelease('job')).toBe(true);
      const { at } = await waiter.next<{ type: string; at: number }>('acquired', 5_000);
      // Its poll cap is 30 s: only the release's notification could wake it this soon.
      expect(at - releasedAt).toBeLessThan(500);
      const aborted = await holder.next<{ type: string; reason: string; at: number }>(
        'aborted',
        5_000,
      );
      // Told by the forced release's notice, not at its next renewal (its ttl is long).
      expect(aborted.reason).toBe('vanished');
      expect(aborted.at - releasedAt).toBeLessThan(500);
    } finally {
      holder.send({ type: 'stop' });
      waiter.send({ type: 'stop' });
      await Promise.all([holder.stop(), waiter.stop()]);
      await engine.close();
    }
  }, 20_000);
});

describe("the holder's own waiters", () => {
  it("are listed, marked local, beside the store's waiter list; the CLI shows the store's only", async () => {
    const engine = testEngine();
    await engine.init();
    const waiter = worker('waiter', 'busy');
    try {
      await waiter.next('ready', 8_000);
      waiter.send({ type: 'start' });
      const lock = await engine.acquire('busy', { ttl: 10_000 });
      // Two more requests here: they wait in this process's queue, handed the lock locally.
      const here = [0, 1].map(() => engine.acquire('busy', { ttl: 10_000, wait: 20_000 }));
      waiter.send({ type: 'acquire' });
      await until(async () => {
        const found = await engine.inspections.inspect('busy');
        return found?.waiters.some((each) => each.owner?.pid === waiter.pid) ?? false;
      });

      const found = await engine.inspections.inspect('busy');
      expect(found!.waiters).toEqual(
        expect.arrayContaining([
          {
            process: PROCESS_ID,
            owner: expect.objectContaining(me),
            queues: 1,
            local: true,
            requests: 2,
          },
          expect.objectContaining({
            owner: expect.objectContaining({ pid: waiter.pid }),
            queues: 1,
          }),
        ]),
      );
      expect(found!.waiters.filter((each) => each.local)).toHaveLength(1);
      expect(found!.waiters.find((each) => each.owner?.pid === waiter.pid)).not.toHaveProperty(
        'local',
      );

      // The admin CLI is another process: it sees the store's list, without this one's queue.
      const lines: string[] = [];
      const io = {
        out: (line: string) => lines.push(line),
        err: (line: string) => lines.push(line),
      };
      expect(await runCli(['inspect', 'busy', '--json', '--redis', redis.server.url], {}, io)).toBe(
        0,
      );
      const fromCli = JSON.parse(lines.join('\n')) as { waiters: { process: string }[] };
      expect(fromCli.waiters.map((each) => each.process)).not.toContain(PROCESS_ID);
      expect(fromCli.waiters).toHaveLength(1);

      await lock.release();
      for (const next of here) await (await next).release();
      await waiter.next('acquired', 10_000);
      expect(await engine.inspections.inspect('busy')).toBeUndefined();
    } finally {
      waiter.send({ type: 'stop' });
      await waiter.stop();
      await engine.close();
    }
  }, 30_000);

  it('are listed with the memory store too, which keeps no waiter list', async () => {
    const engine = engineOn(new MemoryLockStore(), {
      instanceId: 'mem',
    } as Partial<LockEngineConfig>);
    await engine.init();
    const lock = await engine.acquire('m', { ttl: 5_000 });
    const waiting = engine.acquire('m', { wait: 5_000 });
    await until(async () => ((await engine.inspections.inspect('m'))?.waiters.length ?? 0) > 0);
    const found = await engine.inspections.inspect('m');
    expect(found!.waiters).toEqual([
      {
        process: PROCESS_ID,
        owner: expect.objectContaining({ instanceId: 'mem' }),
        queues: 1,
        local: true,
        requests: 1,
      },
    ]);
    await lock.release();
    await (await waiting).release();
    await engine.close();
  });
});

describe('inspect', () => {
  it('shows a mutex with its owner, ttl, fence and the cost of two commands', async () => {
    const engine = testEngine();
    await engine.init();
    const lock = await engine.acquire('order', { ttl: 5_000, fencing: true });
    const before = await commandCalls(redis.probe);
    const found = await engine.inspections.inspect('order');
    const calls = callsBetween(before, await commandCalls(redis.probe));
    expect(found).toEqual({
      key: 'order',
      kind: 'mutex',
      holderCount: 1,
      holders: [
        { process: PROCESS_ID, owner: expect.objectContaining(me), ttl: expect.any(Number) },
      ],
      waiters: [],
      fence: lock.fence,
    });
    // Two round trips: the script (its commands counted as Redis counts them) and the owners' MGET.
    expect(calls).toEqual({ evalsha: 1, type: 1, get: 3, lrange: 1, pttl: 1, mget: 1 });
    await lock.release();
    expect(await engine.inspections.inspect('order')).toBeUndefined();
    await engine.close();
  });

  it('shows a semaphore: its limit, holders by lease end, at most `holders` listed', async () => {
    const engine = testEngine();
    await engine.init();
    const locks = await Promise.all(
      [3_000, 4_000, 5_000].map((ttl) => engine.acquire('pool', { limit: 5, ttl })),
    );
    const found = await engine.inspections.inspect('pool', { holders: 2 });
    expect(found).toMatchObject({ kind: 'semaphore', limit: 5, holderCount: 3 });
    expect(found!.holders).toHaveLength(2);
    expect(found!.holders[0].ttl).toBeLessThanOrEqual(3_000);
    expect(found!.holders[1].ttl).toBeGreaterThan(3_000);
    expect(found!.holders[0].owner).toMatchObject(me);
    await Promise.all(locks.map((lock) => lock.release()));
    expect(await engine.inspections.inspect('pool')).toBeUndefined();
    await engine.close();
  });

  it('shows a read-write lock: readers by mode, and a writer waiting', async () => {
    const engine = testEngine();
    await engine.init();
    const readers = await Promise.all([1, 2].map(() => engine.acquire('doc', { mode: 'read' })));
    const writer = engine.acquire('doc', { mode: 'write', wait: 10_000 });
    await until(async () => (await engine.inspections.inspect('doc'))?.writerWaiting !== undefined);
    const found = await engine.inspections.inspect('doc');
    expect(found).toMatchObject({ kind: 'read-write', holderCount: 2 });
    expect(found!.holders.map((holder) => holder.mode)).toEqual(['read', 'read']);
    expect(found!.writerWaiting).toMatchObject({ process: PROCESS_ID, owner: me });
    await Promise.all(readers.map((lock) => lock.release()));
    const written = await writer;
    expect((await engine.inspections.inspect('doc'))!.holders[0].mode).toBe('write');
    await written.release();
    await engine.close();
  });

  it('refuses a bad key as an acquire does, and a list of keys', async () => {
    const engine = testEngine();
    await expect(engine.inspections.inspect('a\x1ffence')).rejects.toThrow(LockKeyError);
    await expect(engine.inspections.inspect(['a'] as never)).rejects.toThrow(LockOptionsError);
    await engine.close();
  });
});

describe('the registration', () => {
  it('is one key with an expiry, that no lock key can name, gone at close', async () => {
    const engine = testEngine();
    await engine.init();
    const key = registrationKeyOf('lock:', PROCESS_ID);
    expect(key).toContain('\x1f');
    expect(await redis.probe.pttl(key)).toBeGreaterThan(50_000);
    expect(JSON.parse((await redis.probe.get(key))!)).toMatchObject(me);
    await engine.close();
    expect(await redis.probe.exists(key)).toBe(0);
  });

  it('is deleted by the last of two engines of this process with one prefix to close', async () => {
    const [first, second] = [testEngine(), testEngine()];
    await Promise.all([first.init(), second.init()]);
    const key = registrationKeyOf('lock:', PROCESS_ID);
    await first.close();
    await first.close();
    expect(await redis.probe.pttl(key)).toBeGreaterThan(50_000);
    await second.close();
    expect(await redis.probe.exists(key)).toBe(0);
  });
});

describe('list', () => {
  it('pages through every held lock with SCAN, never KEYS, and skips companion keys', async () => {
    const engine = testEngine();
    await engine.init();
    const held = await engine.acquire('fenced', { fencing: true });
    const pipeline = redis.probe.pipeline();
    for (let i = 0; i < 2_000; i++) {
      pipeline.set(`lock:bulk:${i}`, `${PROCESS_ID}${'x'.repeat(22)}`, 'PX', 60_000);
    }
    await pipeline.exec();
    const before = await commandCalls(redis.probe);
    const found: LockSummary[] = await all(engine.inspections.list('*', { count: 200 }));
    const calls = callsBetween(before, await commandCalls(redis.probe));
    expect(found).toHaveLength(2_001);
    expect(new Set(found.map((each) => each.key)).size).toBe(2_001);
    expect(found.find((each) => each.key === 'fenced')?.holder?.owner).toMatchObject(me);
    expect(calls.scan).toBeGreaterThanOrEqual(10);
    expect(calls.keys).toBeUndefined();
    expect(await all(engine.inspections.list('bulk:1?'))).toHaveLength(10);
    await held.release();
    await engine.close();
  });

  it('matches the prefix literally', async () => {
    const engine = createTestEngine(redis.client, { keyPrefix: 'l*[' });
    await redis.probe.set('l*[a', 'x', 'PX', 10_000);
    await redis.probe.set('lx[b', 'x', 'PX', 10_000);
    expect((await all(engine.inspections.list())).map((each) => each.key)).toEqual(['a']);
    await engine.close();
  });
});

describe('LockService', () => {
  it('inspects with the instanceId option, and logs a forced release at WARN', async () => {
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [LockModule.forRoot({ redis: redis.client, instanceId: 'nest-1', logger })],
    }).compile();
    const app = await moduleRef.init();
    const locks = app.get(LockService);
    const lock = await locks.acquire('svc', { limit: 2 });
    const found = await locks.inspect('svc');
    expect(found!.holders[0].owner).toMatchObject({ instanceId: 'nest-1', pid: process.pid });
    expect(await all(locks.list())).toMatchObject([{ key: 'svc', kind: 'semaphore' }]);
    expect(logger.at('warn')).toEqual([]);
    expect(await locks.forceRelease('svc')).toBe(true);
    // The holder here hears of it at once, and its loss is logged too.
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve));
    expect(lock.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'vanished' });
    expect(logger.at('warn').map((line) => line.text)).toEqual([
      expect.stringMatching(/^Lock "svc" was released by force/),
      expect.stringMatching(
        /^Lock "svc" was lost while held \(vanished\).*removed from the store before its lease ended/,
      ),
    ]);
    expect(await locks.forceRelease('svc')).toBe(false);
    expect(logger.at('warn')).toHaveLength(2);
    await lock.release();
    await app.close();
  });

  it('refuses a blank instanceId at bootstrap', () => {
    expect(() => new LockService({ redis: redis.client, instanceId: ' ', logger: false })).toThrow(
      LockOptionsError,
    );
  });
});

describe('other stores', () => {
  it('the memory store inspects, lists and force-releases, and knows since when', async () => {
    const store = new MemoryLockStore();
    const engine = engineOn(store, { instanceId: 'mem' } as Partial<LockEngineConfig>);
    await engine.init();
    const lock = await engine.acquire('m', { ttl: 5_000 });
    const found = await engine.inspections.inspect('m');
    expect(found!.holders[0]).toMatchObject({ owner: { instanceId: 'mem', pid: process.pid } });
    expect(found!.holders[0].since).toBeLessThanOrEqual(Date.now());
    expect((await all(engine.inspections.list('m'))).map((each) => each.key)).toEqual(['m']);
    expect(await engine.inspections.forceRelease('m')).toBe(true);
    expect(await engine.inspections.inspect('m')).toBeUndefined();
    expect(await engine.inspections.forceRelease('m')).toBe(false);
    await lock.release();
    await engine.close();
  });

  it('Redlock refuses with LockOptionsError', async () => {
    const store = new RedlockLockStore([redis.client]);
    const engine = engineOn(store, { closeStore: async () => undefined });
    await expect(engine.inspections.inspect('r')).rejects.toThrow(LockOptionsError);
    await expect(engine.inspections.forceRelease('r')).rejects.toThrow(/cannot inspect/);
    await engine.close();
  });
});

async function until(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
