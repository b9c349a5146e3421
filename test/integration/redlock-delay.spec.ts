import { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockError, LockStoreError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store.js';
import { ObservedStore } from '../harness/observed-store.js';
import { reportFigures } from '../harness/figures.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { TcpDelayProxy } from '../harness/tcp-delay-proxy.js';
import { errorOf, outcome, waitUntil } from '../harness/waits.js';
import { callsBetween, commandCalls } from '../harness/command-stats.js';
import { recordEvents } from '../harness/engine-events.js';
import { engineOn } from '../harness/test-engine.js';

/** How many nodes hold `key` right now, read directly (not through the proxies). */
async function holders(inspect: readonly Redis[], key: string): Promise<number> {
  const found = await Promise.all(inspect.map((client) => client.exists(key)));
  return found.reduce((sum, n) => sum + n, 0);
}

/** How many SET commands a node has run. */
async function setCalls(client: Redis): Promise<number> {
  return (await commandCalls(client)).get('set') ?? 0;
}

// Redlock counts a lock only if a majority took it with time to spare on the lease. Here the
// nodes answer late (a delaying proxy in front of each) or not at all (SIGSTOP).
describe('Redlock when nodes answer late', () => {
  let fleet: RedisFleet;
  let proxies: TcpDelayProxy[];
  let inspect: Redis[];
  const clients: Redis[] = [];
  const engines: LockEngine[] = [];
  const extraProxies: TcpDelayProxy[] = [];

  /** An engine whose node clients go through the proxies, warmed up with the delay off. */
  async function engineThroughProxies(): Promise<LockEngine> {
    const nodes = proxies.map((proxy) => {
      const client = new Redis({ host: '127.0.0.1', port: proxy.port, maxRetriesPerRequest: 1 });
      client.on('error', () => undefined);
      return client;
    });
    clients.push(...nodes);
    return warm(createLockEngine({ redlock: nodes, storeTimeout: 5_000 }));
  }

  /** Connected and scripts loaded, so the timed attempt is one round trip per node. */
  async function warm(engine: LockEngine): Promise<LockEngine> {
    engines.push(engine);
    await engine.init(); // connects every node, as LockModule does at startup
    await waitUntil(
      'a warm-up lock',
      async () => {
        const lock = await engine.acquire('warm-up').catch(() => undefined);
        return lock && (await lock.release());
      },
      10_000,
    );
    return engine;
  }

  beforeAll(async () => {
    fleet = await startRedisFleet(5);
    proxies = await Promise.all(fleet.ports.map((port) => TcpDelayProxy.start(port)));
    inspect = fleet.clients();
  });

  afterEach(async () => {
    for (const proxy of proxies) proxy.setDelay(0);
    for (const server of fleet.servers) server.resume();
    await Promise.all(engines.splice(0).map((engine) => engine.close()));
    for (const client of clients.splice(0)) client.disconnect();
    await Promise.all(extraProxies.splice(0).map((proxy) => proxy.close()));
    await Promise.all(inspect.map((client) => client.flushall()));
  });

  afterAll(async () => {
    for (const client of inspect ?? []) client.disconnect();
    await Promise.all((proxies ?? []).map((proxy) => proxy.close()));
    await fleet?.stopAll();
  });

  it('never reports as acquired a lock whose nodes answer after its ttl, and leaves no key behind', async () => {
    const locks = await engineThroughProxies();
    const events = recordEvents(locks);
    const setsBefore = await Promise.all(inspect.map(setCalls));
    // Each node takes the key 150 ms after the request and answers at 300 ms: past the 100 ms
    // lease, and past the 10 ms Redlock allows a node for that lease.
    for (const proxy of proxies) proxy.setDelay(150);
    const startedAt = performance.now();

    const error = await errorOf(() => locks.acquire('slow', { ttl: 100, wait: 0 }));

    const failedAfter = performance.now() - startedAt;
    // Every node does take it, too late to count (and gives it back at once, so a poll could
    // miss it: count the SETs each node ran instead).
    await waitUntil(
      'the key to land on all 5 nodes',
      async () => (await Promise.all(inspect.map(setCalls))).every((n, i) => n > setsBefore[i]!),
      3_000,
    );
    events.stop();
    reportFigures('redlock, nodes answering after the ttl', {
      failedAfterMs: Math.round(failedAfter),
    });
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as LockStoreError).nodes?.map(({ outcome }) => outcome)).toEqual(
      proxies.map(() => 'failed'),
    );
    expect(events.events.filter((event) => event.type === 'acquired')).toEqual([]);
    expect(locks.heldCount).toBe(0);
    await waitUntil(
      'no node to hold the key',
      async () => (await holders(inspect, 'lock:slow')) === 0,
    );
  });

  it('gives the key back on each late node at once, not when its lease ends', async () => {
    const locks = await engineThroughProxies();
    // Late for Redlock's 100 ms per node, early for the 5 s lease.
    for (const proxy of proxies) proxy.setDelay(300);

    const error = await errorOf(() => locks.acquire('late', { ttl: 5_000, wait: 0 }));

    expect(error).toBeInstanceOf(LockStoreError);
    await waitUntil('the key to land on every node', async () =>
      (await holders(inspect, 'lock:late')) === 5 ? true : undefined,
    );
    const landedAt = performance.now();
    await waitUntil(
      'every node to be given the key back',
      async () => (await holders(inspect, 'lock:late')) === 0,
      3_000,
    );
    const heldFor = performance.now() - landedAt;
    reportFigures('redlock, late node key given back after (ms)', { heldFor: Math.round(heldFor) });
    expect(heldFor).toBeLessThan(3_000);
  });

  it('with 3 of 5 nodes frozen (SIGSTOP), fails with LockStoreError and cleans up once they wake', async () => {
    const locks = await warm(createLockEngine({ redlock: track(fleet.clients()) }));
    const frozen = fleet.servers.slice(0, 3);
    const before = await Promise.all(inspect.slice(0, 3).map(commandCalls));
    for (const server of frozen) server.pause();

    const error = await errorOf(() => locks.acquire('frozen', { ttl: 10_000, wait: 0 }));
    for (const server of frozen) server.resume();

    expect(error).toBeInstanceOf(LockStoreError);
    const outcomes = (error as LockStoreError).nodes?.map(({ outcome }) => outcome);
    expect(outcomes?.slice(0, 3)).toEqual(['failed', 'failed', 'failed']);
    // Woken, the frozen nodes run the acquire they had been sent, then the give-back.
    await waitUntil('the woken nodes to run the queued acquire and its give-back', async () => {
      const after = await Promise.all(inspect.slice(0, 3).map(commandCalls));
      const ran = before.map((calls, i) => Object.values(callsBetween(calls, after[i]!)));
      return ran.every((counts) => counts.reduce((sum, n) => sum + n, 0) >= 2);
    });
    await waitUntil(
      'no node to hold the key',
      async () => (await holders(inspect, 'lock:frozen')) === 0,
    );
  });

  it('does not grant a lock whose attempt outlived its ttl because this process stalled', async () => {
    const locks = await warm(createLockEngine({ redlock: track(fleet.clients()) }));

    const attempt = locks.acquire('stalled', { ttl: 100, wait: 0 });
    // The requests are on the wire; the answers come back while the loop is blocked.
    const blockedUntil = performance.now() + 150;
    while (performance.now() < blockedUntil);
    const error = await errorOf(() => attempt);

    // Not granted. Redlock calls a majority that came too late "not acquired", so this reads
    // as busy, though nobody holds the lock.
    expect(error).toBeInstanceOf(LockError);
    expect(locks.heldCount).toBe(0);
    await waitUntil(
      'no node to hold the key',
      async () => (await holders(inspect, 'lock:stalled')) === 0,
    );
  });

  it('gets one of two contenders the lock when they split the live nodes between them', async () => {
    /** Node clients that reach the nodes at `slow` 10 ms late, through proxies of their own. */
    const skewed = (slow: readonly number[]): Promise<Redis[]> =>
      Promise.all(
        fleet.ports.map(async (port, i) => {
          let target = port;
          if (slow.includes(i)) {
            const proxy = await TcpDelayProxy.start(port, 10);
            extraProxies.push(proxy);
            target = proxy.port;
          }
          const client = new Redis({ host: '127.0.0.1', port: target, maxRetriesPerRequest: 1 });
          client.on('error', () => undefined);
          return client;
        }),
      );
    const holder = await warm(createLockEngine({ redlock: track(fleet.clients()) }));
    // A reaches nodes 0 and 1 first, B reaches node 2 first: trying at the same moment, each
    // takes what it reaches first and neither has the 3 of the 5 that Redlock needs.
    // A per-node timeout with room for a loaded machine: only the frozen nodes should miss it.
    const stores = [[2], [0, 1]].map(
      async (slow) =>
        new ObservedStore(new RedlockLockStore(track(await skewed(slow)), { nodeTimeout: 250 })),
    );
    const [a, b] = await Promise.all(stores);
    // A short poll cap, so that a waiter that sleeps instead of retrying at once is not slow.
    const contenders = await Promise.all(
      [a!, b!].map((store) => warm(engineOn(store, { pollCap: 300 }))),
    );
    // Nodes 3 and 4 stop answering, so the three others must all agree.
    for (const server of fleet.servers.slice(3)) server.pause();
    const lock = await holder.acquire('split', { ttl: 10_000 });
    const parked = [a!, b!].map(
      (store) => new Promise<void>((resolve) => (store.onParked = resolve)),
    );
    // Each lets go as soon as it has the lock, so both can have it in turn.
    const attempts = contenders.map((engine) =>
      outcome(
        engine.acquire('split', { ttl: 10_000, wait: 8_000 }).then(async (won) => {
          await won.release();
          return won;
        }),
      ),
    );
    // A contender whose wait ends before it parks (a store error) fails the test below with
    // its error, instead of leaving this test to its timeout.
    await Promise.all(parked.map((isParked, i) => Promise.race([isParked, attempts[i]])));
    const attemptsBefore = a!.attempts + b!.attempts;

    // Both are woken by the same release notification.
    const releasedAt = performance.now();
    await lock.release();
    const [first, second] = await Promise.all(attempts);

    reportFigures('redlock, two contenders after one release', {
      attempts: a!.attempts + b!.attempts - attemptsBefore,
      winners: [first, second].filter((result) => result!.value).length,
      bothDoneAfterMs: Math.round(Math.max(first!.at, second!.at) - releasedAt),
    });
    expect([first!.error, second!.error]).toEqual([undefined, undefined]);
  }, 20_000);

  function track(created: Redis[]): Redis[] {
    clients.push(...created);
    return created;
  }
});
