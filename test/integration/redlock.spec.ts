import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError, LockOptionsError, LockStoreError } from '../../lib/errors/lock.errors.js';
import type { LockModuleOptions } from '../../lib/nest/interfaces/lock-module-options.interface.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { LockModule } from '../../lib/nest/lock.module.js';
import { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store.js';
import { reportFigures } from '../harness/figures.js';
import { loopLag } from '../harness/loop-lag.js';
import { countOverlaps } from '../harness/intervals.js';
import { adminCall, connectionCount } from '../harness/redis-admin.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { DROPPED_AT_ONCE } from '../harness/redis-server.js';
import { allClosed, socketsOpenedBy } from '../harness/opened-sockets.js';
import { errorOf, waitUntil } from '../harness/waits.js';
import { callsBetween, commandCalls } from '../harness/command-stats.js';
import { scanKeys } from '../harness/scan-keys.js';

describe('Redlock over 5 independent masters', () => {
  let fleet: RedisFleet;
  /** One direct client per node, for looking at keys; never used by the lock engines. */
  let inspect: Redis[] = [];
  const clients: Redis[] = [];
  const engines: LockEngine[] = [];

  /**
   * A fresh client per node, as one app process would have. It retries a lost connection every
   * 20 ms, so a call to a stopped node fails within a retry or two instead of waiting out
   * ioredis' growing backoff; the generous per-node timeout below (room for a loaded machine)
   * then costs nothing while nodes are down.
   */
  function nodeClients(): Redis[] {
    const created = fleet.ports.map((port) => {
      const client = new Redis({
        host: '127.0.0.1',
        port,
        maxRetriesPerRequest: 1,
        retryStrategy: () => 20,
        ...DROPPED_AT_ONCE,
      });
      client.on('error', () => undefined);
      return client;
    });
    clients.push(...created);
    return created;
  }

  function redlockEngine(
    options: Partial<LockModuleOptions> = {},
    nodes = nodeClients(),
  ): LockEngine {
    const created = createLockEngine({
      redlock: nodes,
      redlockOptions: { nodeTimeout: 500 },
      storeTimeout: 2_000,
      ...options,
    });
    engines.push(created);
    return created;
  }

  /**
   * An engine whose clients are connected and whose scripts are loaded, so that its timed calls
   * are one round trip per node: a cold first call on a loaded machine can miss the per-node
   * timeout, which is not what these tests are about.
   */
  async function warmEngine(): Promise<LockEngine> {
    const nodes = nodeClients();
    await Promise.all(nodes.map((client) => client.ping()));
    const engine = redlockEngine({}, nodes);
    await waitUntil(
      'a first lock through the new engine',
      async () => {
        const lock = await engine.acquire('warm-up').catch((error: unknown) => {
          if (error instanceof LockStoreError) return undefined;
          throw error;
        });
        return lock && (await lock.release());
      },
      10_000,
      20,
    );
    return engine;
  }

  /** Keys under `lock:` on the nodes at these indexes. */
  async function lockKeysOn(indexes: readonly number[]): Promise<string[][]> {
    return Promise.all(indexes.map((i) => scanKeys(inspect[i]!, 'lock:*')));
  }

  beforeAll(async () => {
    fleet = await startRedisFleet(5);
  });

  beforeEach(() => {
    inspect = fleet.clients();
  });

  afterEach(async () => {
    await Promise.all(engines.splice(0).map((created) => created.close()));
    for (const client of [...clients.splice(0), ...inspect]) client.disconnect();
    // Bring back what a test stopped, for the next one, and leave every node empty.
    await Promise.all(fleet.servers.filter((s) => s.pid === undefined).map((s) => s.restart()));
    await Promise.all(fleet.ports.map((port) => adminCall(port, ['FLUSHALL'])));
  });

  afterAll(async () => {
    await fleet?.stopAll();
  });

  describe('bootstrap', () => {
    it('refuses fencing: true with a LockOptionsError, asking no node', async () => {
      const locks = redlockEngine();
      const fencedByDefault = redlockEngine({ defaults: { fencing: true } });
      const before = await Promise.all(inspect.map(commandCalls));

      const errors = [
        await errorOf(() => locks.acquire('fenced', { fencing: true })),
        await errorOf(() => fencedByDefault.acquire('fenced')),
      ];

      for (const error of errors) {
        expect(error).toBeInstanceOf(LockOptionsError);
        expect((error as Error).message).toMatch(/cannot issue safe fencing tokens \(Redlock/);
      }
      const after = await Promise.all(inspect.map(commandCalls));
      expect(before.map((calls, i) => callsBetween(calls, after[i]!))).toEqual(
        inspect.map(() => ({})),
      );
    });

    it('rejects an empty node list, a node listed twice and an even count without a quorum', async () => {
      const [a, b, c, d] = nodeClients();
      const sameNodeAsA = fleet.servers[0]!.client();
      clients.push(sameNodeAsA);
      const [url0, url1, url2, url3] = fleet.servers.map((server) => server.url);
      const module = (options: LockModuleOptions) =>
        Test.createTestingModule({ imports: [LockModule.forRoot(options)] }).compile();

      const cases: [string, () => unknown, RegExp][] = [
        ['empty store', () => new RedlockLockStore([]), /empty list/],
        ['empty engine', () => createLockEngine({ redlock: [] }), /empty list/],
        ['empty module', () => module({ redlock: [] }), /empty list/],
        ['same client twice', () => new RedlockLockStore([a!, b!, a!]), /listed twice/],
        [
          'two clients, one node',
          () => new RedlockLockStore([a!, sameNodeAsA, b!]),
          /listed twice/,
        ],
        ['same URL twice', () => module({ redlock: [url0!, url1!, url0!] }), /listed twice/],
        ['even count', () => new RedlockLockStore([a!, b!, c!, d!]), /even number .*"quorum"/],
        ['even count, module', () => module({ redlock: [url0!, url1!, url2!, url3!] }), /even/],
      ];
      for (const [name, bootstrap, message] of cases) {
        const error = await errorOf(bootstrap);
        expect({ name, error }).toEqual({ name, error: expect.any(LockOptionsError) });
        expect({ name, message: (error as Error).message }).toEqual({
          name,
          message: expect.stringMatching(message),
        });
      }
      // An explicit majority makes an even count acceptable.
      expect(new RedlockLockStore([a!, b!, c!, d!], { quorum: 3 })).toBeInstanceOf(
        RedlockLockStore,
      );
    });

    it('leaves no connection open when it rejects the node list', async () => {
      const before = await connectionCount(fleet.ports);
      const urls = fleet.servers.map((server) => server.url);

      for (const redlock of [[urls[0]!, urls[0]!, urls[1]!], urls.slice(0, 4)]) {
        const { settled, sockets } = await socketsOpenedBy(() => createLockEngine({ redlock }));
        expect(settled.error).toBeInstanceOf(LockOptionsError);
        // Whatever was connected for the rejected list is closed again: each close is awaited.
        await allClosed(sockets);
      }

      expect(await connectionCount(fleet.ports)).toBe(before);
    });
  });

  it('answers busy with each node’s answer while another engine holds the lock', async () => {
    const [holder, other] = await Promise.all([warmEngine(), warmEngine()]);
    const lock = await holder.acquire('held', { ttl: 10_000 });

    const error = await errorOf(() => other.acquire('held', { wait: 0 }));

    expect(error).toBeInstanceOf(LockBusyError);
    expect((error as LockBusyError).nodes).toEqual(
      fleet.ports.map((port) => ({ node: `127.0.0.1:${port}`, outcome: 'busy' })),
    );
    expect(await lockKeysOn([0, 1, 2, 3, 4])).toEqual(inspect.map(() => ['lock:held']));
    expect(await lock.release()).toBe('released');
  });

  it('with 2 of 5 masters down, contending engines still take turns and never overlap', async () => {
    // Each engine is one "process" with its own store and clients, connected before the crash.
    const locks = await Promise.all(Array.from({ length: 4 }, warmEngine));
    await Promise.all([fleet.servers[3]!.stop(), fleet.servers[4]!.stop()]);
    const loopsPerEngine = 2;
    const iterations = 6;
    const sections: [bigint, bigint][] = [];
    const storeErrors: unknown[] = [];
    const stuck: unknown[] = [];
    let counter = 0;
    const startedAt = performance.now();
    const increment = async (): Promise<void> => {
      const enter = process.hrtime.bigint();
      const value = counter;
      await new Promise(setImmediate);
      counter = value + 1;
      sections.push([enter, process.hrtime.bigint()]);
    };
    const loop = async (engine: LockEngine): Promise<void> => {
      for (let done = 0; done < iterations;) {
        try {
          // Far longer than a turn of all 8 loops, so busy means nobody got the lock.
          await engine.withLock('quorum', increment, { wait: 10_000 });
          done++;
        } catch (error) {
          // A live node slower than the per-node timeout (a loaded machine) costs the quorum
          // of one attempt; a store that fails for good runs into the cap below.
          if (error instanceof LockStoreError && storeErrors.length < 5) storeErrors.push(error);
          else return void stuck.push(error);
        }
      }
    };
    await Promise.all(
      locks.flatMap((engine) => Array.from({ length: loopsPerEngine }, () => loop(engine))),
    );

    const expected = locks.length * loopsPerEngine * iterations;
    // Each with how the nodes answered its last attempt: a mix of acquired and busy there is a
    // split vote, where contenders each took some of the live nodes and none took enough.
    expect(
      stuck.map((error) => [String(error), (error as LockBusyError).nodes?.map((n) => n.outcome)]),
    ).toEqual([]);
    reportFigures('redlock with 2 of 5 down', {
      sections: sections.length,
      storeErrors: storeErrors.length,
      seconds: (performance.now() - startedAt) / 1000,
    });
    expect(counter).toBe(expected);
    expect(sections).toHaveLength(expected);
    expect(countOverlaps(sections)).toBe(0);
    expect(await lockKeysOn([0, 1, 2])).toEqual([[], [], []]);
  }, 30_000);

  it('with 3 of 5 masters down, acquire fails within its wait with LockStoreError naming each node', async () => {
    const down = fleet.servers.slice(0, 3);
    const locks = await warmEngine();
    await Promise.all(down.map((server) => server.stop()));
    const wait = 3_000;
    const lag = loopLag();
    const startedAt = performance.now();

    const error = await errorOf(() => locks.acquire('scarce', { ttl: 10_000, wait }));

    const elapsed = performance.now() - startedAt;
    const slack = Math.min(lag.stop(), wait / 3);
    reportFigures('redlock with 3 of 5 down', { failedAfterMs: Math.round(elapsed) });
    expect(elapsed).toBeLessThan(wait + slack);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/reached only 2 of 5 nodes, below the quorum of 3/);
    const nodes = (error as LockStoreError).nodes ?? [];
    expect(nodes.map(({ node }) => node)).toEqual(fleet.ports.map((port) => `127.0.0.1:${port}`));
    expect(nodes.slice(0, down.length)).toEqual(
      down.map(() => ({ node: expect.any(String), outcome: 'failed', error: expect.any(String) })),
    );
    expect(nodes.slice(down.length).map(({ outcome }) => outcome)).toEqual([
      'acquired',
      'acquired',
    ]);
    // The two nodes that took it give it back at once, long before its 10 s lease would end.
    await waitUntil('the live nodes to be given the key back', async () =>
      (await lockKeysOn([3, 4])).every((keys) => keys.length === 0),
    );
  });
});
