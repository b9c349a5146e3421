import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import type {
  ExtendResult,
  LeaseExtension,
  LockStore,
} from '../../lib/stores/lock-store.interface.js';
import type { LockInspector } from '../../lib/stores/lock-inspection.interface.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { ForwardingStore } from '../harness/forwarding-store.js';
import { maxConcurrent, type Interval } from '../harness/intervals.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useTurnProcsOnRedis } from '../harness/turn-procs.js';
import { abortTime, waitUntil } from '../harness/waits.js';

// A lease removed by someone else (an operator's forceRelease, a DEL, a restart without
// persistence) is never passed on to a waiter in the holding process, and a forced release
// reaches the holder at once: two critical sections never run together. Process A holds `k`
// with a second caller of its own waiting; process B removes the key and takes it.
const TTL = 3_000;
const B_HOLDS_MS = 350;

/**
 * The canary's store: a local hand-off is "confirmed" without asking Redis, and the process
 * hears no forced release. The protections off, the same scenario shows the overlap.
 */
class UnguardedStore extends ForwardingStore {
  override extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
    return Promise.resolve(leases.map(() => 'extended' as const));
  }

  override get inspector(): LockInspector {
    const inner = this.inner.inspector!;
    return {
      register: ({ onForcedRelease: _deaf, ...registration }) => inner.register(registration),
      inspect: (key, options) => inner.inspect(key, options),
      list: (options) => inner.list(options),
      forceRelease: (key, options) => inner.forceRelease(key, options),
    };
  }
}

describe('a lease removed by someone else', () => {
  const { redis, proc } = useTurnProcsOnRedis();
  const opened: LockEngine[] = [];
  afterEach(() => Promise.all(opened.splice(0).map((engine) => engine.close())));

  /** A section of `ms` run under `lock`, timed on the clock all processes share. */
  const sections: Interval[] = [];
  beforeEach(() => void (sections.length = 0));
  async function section(ms: number): Promise<void> {
    const enter = process.hrtime.bigint();
    await new Promise((resolve) => setTimeout(resolve, ms));
    sections.push([enter, process.hrtime.bigint()]);
  }

  /** Process A: its first holder of `k`, and a second caller queued behind it here. */
  async function processA(engine: LockEngine) {
    await engine.init();
    const first = await engine.acquire('k', { ttl: TTL });
    const second = engine.withLock('k', () => section(50), { ttl: TTL, wait: 5_000 });
    await waitUntil('the second caller queued', () => engine.stats().queues > 0);
    return { first, second };
  }

  async function removeThenTake(
    how: 'forceRelease' | 'DEL',
    a: { first: Lock; second: Promise<void> },
    b: LockEngine,
  ): Promise<{ firstAbortedAfter?: number; released: unknown }> {
    const aborted = abortTime(a.first.signal);
    const removedAt = performance.now();
    if (how === 'forceRelease') expect(await b.inspections.forceRelease('k')).toBe(true);
    else await redis.probe.del('lock:k');
    const taking = b.withLock('k', () => section(B_HOLDS_MS), { ttl: TTL, wait: 5_000 });
    // B holds it for a while: A's first holder releases meanwhile.
    await waitUntil('B inside', () => b.heldCount > 0);
    const released = await a.first.release().catch((error: unknown) => error);
    await Promise.all([taking, a.second.catch(() => undefined)]);
    const firstAbortedAfter = a.first.signal.aborted ? (await aborted) - removedAt : undefined;
    return { firstAbortedAfter, released };
  }

  it('forceRelease: the holder hears at once, and its lease goes to no waiter of its process', async () => {
    const a = await processA(proc('a').engine);
    const b = proc('b').engine;

    const { firstAbortedAfter, released } = await removeThenTake('forceRelease', a, b);

    expect(firstAbortedAfter).toBeDefined();
    expect(firstAbortedAfter!).toBeLessThan(B_HOLDS_MS);
    expect(a.first.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'vanished' });
    expect(released).not.toBe('released');
    expect(sections).toHaveLength(2);
    expect(maxConcurrent(sections)).toBe(1);
  });

  it('DEL: the release finds the key gone and passes nothing on; the holder learns the loss', async () => {
    const a = await processA(proc('a').engine);
    const b = proc('b').engine;

    const { released } = await removeThenTake('DEL', a, b);

    expect(released).toBe('stolen');
    expect(sections).toHaveLength(2);
    expect(maxConcurrent(sections)).toBe(1);
  });

  it.each(['forceRelease', 'DEL'] as const)(
    'canary (%s): with the hand-off unconfirmed and the notice unheard, the sections overlap',
    async (how) => {
      const client = redis.connect();
      const unguarded: LockStore = new UnguardedStore(new RedisLockStore(client));
      const engine = createTestEngine(client, { store: unguarded });
      opened.push(engine);
      const a = await processA(engine);
      const b = proc('b').engine;

      const { released } = await removeThenTake(how, a, b);

      expect(released).toBe('released');
      expect(sections).toHaveLength(2);
      expect(maxConcurrent(sections)).toBe(2);
    },
  );
});
