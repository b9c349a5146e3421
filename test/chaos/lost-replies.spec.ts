import { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { LockBusyError, LockStoreError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { CapturingLogger } from '../harness/capturing-logger.js';
import { reportFigures } from '../harness/figures.js';
import { TcpDelayProxy } from '../harness/tcp-delay-proxy.js';
import { useRedisServer } from '../harness/use-redis.js';
import { loopLag } from '../harness/loop-lag.js';
import { CHAOS, timeoutFor } from '../harness/chaos-profile.js';
import { lockKeys } from '../harness/scan-keys.js';
import { locksOf, orphansGone, roundCalls, type Settled } from '../harness/lost-reply-round.js';
import { fencedRounds, INCR_IF_FENCE_OK, nonResending } from '../harness/lost-fenced-writes.js';

const ROUNDS = 10 * CHAOS.rounds;
const STORE_TIMEOUT = 1_000;
const TTL = 30_000;
// Far below the ttl: a key left by a lost reply is given back once the client reconnects.
const ORPHAN_BOUND = 2_000;

type Kind = 'module client' | 'user client';

describe('replies lost with their connection (proxy.loseReplyTo), round after round', () => {
  const redis = useRedisServer();
  let proxy: TcpDelayProxy;
  const engines: LockEngine[] = [];
  const clients: Redis[] = [];

  /** Through the proxy, with ioredis's defaults: it resends what a dropped connection left. */
  function userClient(): Redis {
    const client = new Redis({ port: proxy.port });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  }

  /** As LockModule builds it: the module's own client (never resends), or the user's. */
  /** What the last engine made logged: an outage once as it starts, not once per failed call. */
  let logger: CapturingLogger;

  async function engineOf(kind: Kind): Promise<LockEngine> {
    const target = kind === 'module client' ? `redis://127.0.0.1:${proxy.port}` : userClient();
    logger = new CapturingLogger();
    const locks = createLockEngine({
      redis: target,
      storeTimeout: STORE_TIMEOUT,
      shutdownTimeout: 0,
      logger,
    });
    engines.push(locks);
    // Connected, with the scripts loaded: a lost NOSCRIPT reply would test nothing.
    await (await locks.acquire('warm-up', { fencing: true })).release();
    await (await locks.acquire(['warm-up', 'warm-up:b'])).release();
    return locks;
  }

  beforeEach(async () => {
    proxy = await TcpDelayProxy.start(redis.server.port);
  });

  afterEach(async () => {
    await Promise.all(engines.splice(0).map((locks) => locks.close()));
    for (const client of clients.splice(0)) client.disconnect();
    await proxy.close();
    await redis.probe.flushall();
  });

  /** What must hold of every call, whatever reached Redis before the connection dropped. */
  async function checkCall(kind: Kind, at: string, call: Settled, bound: number): Promise<void> {
    const { name, value, error, ms, ran } = call;
    const label = `${kind} ${at} ${name}`;
    expect({ label, settledInTime: ms <= bound }).toEqual({ label, settledInTime: true });
    // Never "busy" against its own key, and never a result that says so.
    expect({
      label,
      busy: error instanceof LockBusyError || (name === 'tryAcquire' && !error && !value),
    }).toEqual({ label, busy: false });
    if (error) expect({ label, error }).toEqual({ label, error: expect.any(LockStoreError) });
    // A client that resends has every call answered, and each lock recognised as its own.
    if (kind === 'user client') expect({ label, error }).toEqual({ label, error: undefined });
    if (name === 'withLock') expect(ran).toBe(error ? 0 : 1);
    if (name === 'release') {
      expect(await redis.probe.exists(`lock:${at}:release`)).toBe(0);
      // A resent release finds its own delete done; it cannot tell that from an expiry.
      if (!error) expect(['released', 'expired']).toContain(value);
    }
    const lock = value as Lock | undefined;
    for (const key of lock?.token ? lock.keys : []) {
      expect(await redis.probe.get(`lock:${key}`)).toBe(lock!.token);
    }
  }

  async function lostRound(
    kind: Kind,
    locks: LockEngine,
    round: number,
  ): Promise<{ results: Settled[]; orphanMs: number }> {
    const at = `lost:${kind === 'module client' ? 'module' : 'user'}:${round}`;
    const held = {
      extend: await locks.acquire(`${at}:extend`, { ttl: TTL }),
      release: await locks.acquire(`${at}:release`, { ttl: TTL }),
    };
    const cuts = proxy.cuts;
    const lag = loopLag();
    proxy.loseReplyTo(`${at}:acquire`);
    const results = await Promise.all(roundCalls(locks, at, held));
    const bound = STORE_TIMEOUT + lag.stop();

    expect(proxy.cuts).toBe(cuts + 1);
    for (const call of results) await checkCall(kind, at, call, bound);
    // A lost extend leaves the lock held: its key is still there, with its lease.
    expect(held.extend.isHeld).toBe(true);
    expect(await redis.probe.get(`lock:${at}:extend`)).toBe(held.extend.token);
    const owned: Lock[] = [...locksOf(results), held.extend];
    const orphanMs = await orphansGone(redis.probe, owned, ORPHAN_BOUND);
    for (const lock of owned) expect(await lock.release()).toBe('released');
    expect(await lockKeys(redis.probe)).toEqual([]);
    return { results, orphanMs };
  }

  it.each<Kind>(['module client', 'user client'])(
    '%s: every call settles in time, never busy for its own key, and no orphan outlives its give-back',
    async (kind) => {
      const locks = await engineOf(kind);
      const tally = new Tally();
      for (let round = 0; round < ROUNDS; round++) {
        const { results, orphanMs } = await lostRound(kind, locks, round);
        tally.add(results, orphanMs);
      }

      reportFigures(`lost replies, ${kind}, ${ROUNDS} rounds`, tally.figures());
      // The call whose reply was lost: a client that does not resend can only fail it...
      const expected = kind === 'module client' ? 'LockStoreError' : 'Lock';
      expect(tally.outcomes.get('acquire')).toEqual({ [expected]: ROUNDS });
      // ...and the calls in flight with it went down with the connection too, in some rounds,
      // while the log has at most one line per cut connection.
      if (kind === 'module client') expect(tally.failures).toBeGreaterThan(ROUNDS);
      const outages = logger.at('error').filter((line) => line.text.includes('stopped answering'));
      if (kind === 'module client') expect(outages.length).toBeGreaterThan(0);
      expect(outages.length).toBeLessThanOrEqual(ROUNDS);
    },
    timeoutFor(10 * ORPHAN_BOUND, 10_000),
  );

  it('applies a fenced INCRBY exactly once, resent by ioredis or retried with the same id', async () => {
    const lock = await (await engineOf('user client')).acquire('stock', { fencing: true });
    const writers = { resending: userClient(), 'non-resending': nonResending(proxy.port, clients) };
    const { applied, counter, outcomes } = await fencedRounds(proxy, writers, lock.fence!, ROUNDS);

    reportFigures('lost replies, fenced writes', { applied, counter, ...outcomes });
    expect(proxy.cuts).toBe(2 * ROUNDS);
    // Every write id counted once, however often its command reached Redis.
    expect(counter).toBe(applied);
    expect(outcomes.mismatchedRetries).toBe(0);
    expect(outcomes.firstCallFailed).toBeGreaterThan(0);
  });

  // Canary (a): a naive client that resends finds its own applied SET NX and calls it "busy".
  it('canary: a resent SET NX PX answers null, so a naive lock is busy against itself', async () => {
    const naive = userClient();
    await naive.ping();
    proxy.loseReplyTo('lock:naive');

    const reply = await naive.set('lock:naive', 'mine', 'PX', TTL, 'NX');

    expect(proxy.cuts).toBe(1);
    expect(reply).toBeNull();
    expect(await redis.probe.get('lock:naive')).toBe('mine');
  });

  // Canary (b): a fenced INCRBY without a write id is applied again by a resend, or a retry.
  it.each(['resending', 'non-resending'] as const)(
    'canary: a fenced INCRBY without an id is applied twice (%s client)',
    async (kind) => {
      const client = kind === 'resending' ? userClient() : nonResending(proxy.port, clients);
      await client.ping();
      const incr = (): Promise<unknown> => client.eval(INCR_IF_FENCE_OK, 2, 'fence', 'stock', 1, 5);
      proxy.loseReplyTo('INCRBY');

      const first = await incr().catch((error: Error) => error);
      if (first instanceof Error) await incr();

      expect(proxy.cuts).toBe(1);
      expect(await redis.probe.get('stock')).toBe('10');
    },
  );
});

/** Per call name: how the calls ended, and the slowest settle; orphan waits; failures. */
class Tally {
  readonly outcomes = new Map<string, Record<string, number>>();
  readonly slowest: Record<string, number> = {};
  failures = 0;

  add(results: readonly Settled[], orphanMs: number): void {
    this.slowest.orphansGone = Math.max(this.slowest.orphansGone ?? 0, Math.round(orphanMs));
    for (const { name, value, error, ms } of results) {
      const how = error
        ? (error as Error).name
        : typeof value === 'string'
          ? value
          : value
            ? 'Lock'
            : 'ok';
      const counts = this.outcomes.get(name) ?? {};
      counts[how] = (counts[how] ?? 0) + 1;
      this.outcomes.set(name, counts);
      this.slowest[name] = Math.max(this.slowest[name] ?? 0, Math.round(ms));
      if (error) this.failures++;
    }
  }

  figures(): Record<string, unknown> {
    return { slowestMs: this.slowest, outcomes: Object.fromEntries(this.outcomes) };
  }
}
