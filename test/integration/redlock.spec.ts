import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/core/lock-engine.js';
import { LockBusyError, LockOptionsError, LockStoreError } from '../../lib/errors/lock.errors.js';
import type { LockModuleOptions } from '../../lib/interfaces/lock-module-options.interface.js';
import { createLockEngine } from '../../lib/lock-engine.factory.js';
import { LockModule } from '../../lib/lock.module.js';
import { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store.js';
import { reportFigures } from '../harness/figures.js';
import { countOverlaps } from '../harness/intervals.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { errorOf } from '../harness/wait-until.js';
import { callsBetween, commandCalls, scanKeys, waitFor } from './support/probes.js';
import { connectionCount, sleep } from './support/scale-out.js';

const NODE_TIMEOUT = 50;

describe('Redlock over 5 independent masters', () => {
  let fleet: RedisFleet;
  /** One direct client per node, for looking at keys; never used by the lock engines. */
  let inspect: Redis[];
  const clients: Redis[] = [];
  const engines: LockEngine[] = [];

  /** A fresh client per node, as one app process would have. */
  function nodeClients(): Redis[] {
    const created = fleet.clients();
    clients.push(...created);
    return created;
  }

  function redlockEngine(options: Partial<LockModuleOptions> = {}): LockEngine {
    const created = createLockEngine({
      redlock: nodeClients(),
      redlockOptions: { nodeTimeout: NODE_TIMEOUT },
      storeTimeout: 2_000,
      ...options,
    });
    engines.push(created);
    return created;
  }

  /** Keys under `lock:` on the nodes at these indexes. */
  async function lockKeysOn(indexes: readonly number[]): Promise<string[][]> {
    return Promise.all(indexes.map((i) => scanKeys(inspect[i]!, 'lock:*')));
  }

  beforeAll(async () => {
    fleet = await startRedisFleet(5);
    inspect = fleet.clients();
  });

  afterEach(async () => {
    await Promise.all(engines.splice(0).map((created) => created.close()));
    for (const client of clients.splice(0)) client.disconnect();
    // Bring back what a test stopped, empty, for the next one.
    await Promise.all(fleet.servers.filter((s) => s.pid === undefined).map((s) => s.restart()));
    await waitFor(
      'the inspecting clients',
      () => inspect.every((c) => c.status === 'ready'),
      5_000,
    );
    await Promise.all(inspect.map((client) => client.flushall()));
  });

  afterAll(async () => {
    for (const client of inspect ?? []) client.disconnect();
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
        expect(() => createLockEngine({ redlock })).toThrow(LockOptionsError);
      }

      // A client created for the rejected list would be connected well within this.
      await sleep(300);
      expect(await connectionCount(fleet.ports)).toBe(before);
    });
  });

  it('answers busy with each node’s answer while another engine holds the lock', async () => {
    const [holder, other] = [redlockEngine(), redlockEngine()];
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
    await Promise.all([fleet.servers[3]!.stop(), fleet.servers[4]!.stop()]);
    // Each engine is one "process" with its own store and its own clients.
    const locks = Array.from({ length: 4 }, () => redlockEngine());
    const loopsPerEngine = 2;
    const iterations = 8;
    const sections: [bigint, bigint][] = [];
    let counter = 0;
    const startedAt = performance.now();

    await Promise.all(
      locks.flatMap((engine) =>
        Array.from({ length: loopsPerEngine }, async () => {
          for (let i = 0; i < iterations; i++) {
            await engine.withLock(
              'quorum',
              async () => {
                const enter = process.hrtime.bigint();
                const value = counter;
                await new Promise(setImmediate);
                counter = value + 1;
                sections.push([enter, process.hrtime.bigint()]);
              },
              { wait: 30_000 },
            );
          }
        }),
      ),
    );

    const expected = locks.length * loopsPerEngine * iterations;
    reportFigures('redlock with 2 of 5 down', {
      sections: sections.length,
      seconds: (performance.now() - startedAt) / 1000,
    });
    expect(counter).toBe(expected);
    expect(sections).toHaveLength(expected);
    expect(countOverlaps(sections)).toBe(0);
    expect(await lockKeysOn([0, 1, 2])).toEqual([[], [], []]);
  }, 30_000);

  it('with 3 of 5 masters down, acquire fails within its wait with LockStoreError naming each node', async () => {
    const down = fleet.servers.slice(0, 3);
    await Promise.all(down.map((server) => server.stop()));
    const locks = redlockEngine();
    const wait = 3_000;
    const startedAt = performance.now();

    const error = await errorOf(() => locks.acquire('scarce', { ttl: 10_000, wait }));

    const elapsed = performance.now() - startedAt;
    reportFigures('redlock with 3 of 5 down', { failedAfterMs: Math.round(elapsed) });
    expect(elapsed).toBeLessThan(wait);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/reached only 2 of 5 nodes, below the quorum of 3/);
    const nodes = (error as LockStoreError).nodes ?? [];
    expect(nodes.map(({ node, outcome }) => ({ node, outcome }))).toEqual(
      fleet.ports.map((port, i) => ({
        node: `127.0.0.1:${port}`,
        outcome: i < down.length ? 'failed' : 'acquired',
      })),
    );
    for (const node of nodes.slice(0, down.length)) expect(node.error).toEqual(expect.any(String));
    // The two nodes that took it give it back at once, long before its 10 s lease would end.
    await waitFor('the live nodes to be given the key back', async () =>
      (await lockKeysOn([3, 4])).every((keys) => keys.length === 0),
    );
  });
});
