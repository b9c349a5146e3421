import { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockStoreError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { DROPPED_AT_ONCE } from '../harness/redis-server.js';
import { loopLag } from '../harness/loop-lag.js';
import { errorOf } from '../harness/waits.js';
import { recordEvents } from '../harness/engine-events.js';
import { scanKeys } from '../harness/scan-keys.js';

const WAIT = 2_000;

// Clients the user made and handed over at once, as `forRoot({ redlock })` gets them when the
// module is built right after them: still connecting, and without an offline queue, so a
// command sent before one is ready fails on the spot ("Stream isn't writeable").
describe('Redlock over clients still connecting', () => {
  let fleet: RedisFleet;
  let inspect: Redis[] = [];
  const clients: Redis[] = [];
  const engines: LockEngine[] = [];

  function connectingClients(): Redis[] {
    const created = fleet.ports.map((port) => {
      const client = new Redis({
        host: '127.0.0.1',
        port,
        enableOfflineQueue: false,
        ...DROPPED_AT_ONCE,
      });
      client.on('error', () => undefined);
      return client;
    });
    clients.push(...created);
    return created;
  }

  function engineOver(nodes: Redis[]): LockEngine {
    const engine = createLockEngine({ redlock: nodes, storeTimeout: 5_000 });
    engines.push(engine);
    return engine;
  }

  beforeAll(async () => {
    fleet = await startRedisFleet(5);
    inspect = fleet.clients();
  });

  afterEach(async () => {
    for (const server of fleet.servers) server.resume();
    await Promise.all(engines.splice(0).map((engine) => engine.close()));
    for (const client of clients.splice(0)) client.disconnect();
    await Promise.all(fleet.servers.filter((s) => s.pid === undefined).map((s) => s.restart()));
    for (const client of inspect) client.disconnect();
    inspect = fleet.clients();
    await Promise.all(inspect.map((client) => client.flushall()));
  });

  afterAll(async () => {
    for (const client of inspect) client.disconnect();
    await fleet?.stopAll();
  });

  it('with 2 of 5 masters down, waits for the 3 live ones to connect and takes the lock on them', async () => {
    await Promise.all([fleet.servers[3]!.stop(), fleet.servers[4]!.stop()]);
    for (let round = 0; round < 3; round++) {
      const nodes = connectingClients();
      const engine = engineOver(nodes);
      // The clients have not connected yet: the acquire is sent in the same tick.
      expect(nodes.map((client) => client.status)).toEqual(nodes.map(() => 'connecting'));

      const lock = await engine.acquire(`fresh-${round}`, { wait: WAIT });

      expect(lock.isHeld).toBe(true);
      const keys = await Promise.all(inspect.slice(0, 3).map((c) => scanKeys(c, 'lock:*')));
      expect(keys).toEqual(keys.map(() => [`lock:fresh-${round}`]));
      expect(await lock.release()).toBe('released');
    }
  });

  it('retries a quorum missed on nodes still connecting while its wait allows', async () => {
    const live = fleet.servers.slice(0, 3);
    await Promise.all([fleet.servers[3]!.stop(), fleet.servers[4]!.stop()]);
    // Frozen: each connection is accepted, but its handshake goes unanswered until they resume.
    for (const server of live) server.pause();
    const engine = engineOver(connectingClients());
    const startedAt = performance.now();
    const acquired = engine.acquire('slow-start', { wait: WAIT });
    setTimeout(() => live.forEach((server) => server.resume()), 300);

    const lock = await acquired;

    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(300);
    expect(lock.isHeld).toBe(true);
    expect(await lock.release()).toBe('released');
  });

  it('does not wait for nodes known down: with 3 of 5 down it fails at once below the quorum', async () => {
    await Promise.all(fleet.servers.slice(0, 3).map((server) => server.stop()));
    const engine = engineOver(connectingClients());
    const lag = loopLag();
    const startedAt = performance.now();

    const error = await errorOf(() => engine.acquire('scarce', { wait: WAIT }));
    const slack = Math.min(lag.stop(), WAIT / 4);

    // Sent as soon as the down nodes refused their connections, not once the others connected.
    expect(performance.now() - startedAt).toBeLessThan(WAIT / 4 + slack);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/below the quorum of 3/);
    const outcomes = ((error as LockStoreError).nodes ?? []).slice(0, 3);
    expect(outcomes).toEqual(
      outcomes.map(() =>
        expect.objectContaining({ outcome: 'failed', error: expect.stringMatching(/unreachable/) }),
      ),
    );
  });

  it('waits at startup for the live nodes to connect, so the store is not reported down', async () => {
    await Promise.all([fleet.servers[3]!.stop(), fleet.servers[4]!.stop()]);
    const engine = engineOver(connectingClients());
    const recorded = recordEvents(engine);

    await engine.init(); // what LockModule runs at bootstrap

    recorded.stop();
    expect(recorded.events.filter((event) => event.type === 'store-down')).toEqual([]);
    const lock = await engine.acquire('after-startup', { wait: 0 });
    expect(await lock.release()).toBe('released');
  });
});

describe('one Redis over a client still connecting', () => {
  let fleet: RedisFleet;
  const engines: LockEngine[] = [];
  const clients: Redis[] = [];

  beforeAll(async () => {
    fleet = await startRedisFleet(1);
  });

  afterAll(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.close()));
    for (const client of clients.splice(0)) client.disconnect();
    await fleet?.stopAll();
  });

  it('waits for it to connect, at startup and for the first acquire', async () => {
    const client = new Redis({
      port: fleet.ports[0],
      enableOfflineQueue: false,
      ...DROPPED_AT_ONCE,
    });
    client.on('error', () => undefined);
    clients.push(client);
    const engine = createLockEngine({ redis: client });
    engines.push(engine);
    const recorded = recordEvents(engine);
    expect(client.status).toBe('connecting');

    const [, lock] = await Promise.all([engine.init(), engine.acquire('first', { wait: 0 })]);

    recorded.stop();
    expect(recorded.events.filter((event) => event.type === 'store-down')).toEqual([]);
    expect(await lock.release()).toBe('released');
  });
});
