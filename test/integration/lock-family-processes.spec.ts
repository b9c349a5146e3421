import type { Cluster, Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockOptionsError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { ChildWorker, killLiveWorkers, runWorkers } from '../harness/child-workers.js';
import { reportFigures } from '../harness/figures.js';
import { fromWire, maxConcurrent, writerOverlaps, type Interval } from '../harness/intervals.js';
import { RedisCluster } from '../harness/redis-cluster.js';
import { RedisServer } from '../harness/redis-server.js';
import { loopLag } from '../harness/loop-lag.js';
import { errorOf, sleep } from '../harness/waits.js';
import type { FamilyWorkerConfig, FamilyWorkerResult } from '../fixtures/family-worker.js';

const PROCESSES = 3;
const WORKERS = 8;

/** Where the processes lock: what a worker needs to connect, and a client for the test's own engine. */
interface Backend {
  readonly where: Pick<FamilyWorkerConfig, 'port' | 'clusterPorts'>;
  client(): Redis | Cluster;
  stop(): Promise<void>;
}

async function singleServer(): Promise<Backend> {
  const server = await RedisServer.start();
  return { where: { port: server.port }, client: () => server.client(), stop: () => server.stop() };
}

async function threeMasterCluster(): Promise<Backend> {
  const cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 0 });
  const clusterPorts = cluster.nodes.map((node) => node.port);
  return { where: { clusterPorts }, client: () => cluster.client(), stop: () => cluster.stop() };
}

describe.each([
  ['one Redis server', singleServer],
  ['a 3-master Redis Cluster', threeMasterCluster],
])('the lock family across processes on %s', (_name, start) => {
  let backend: Backend;
  const clients: (Redis | Cluster)[] = [];
  const engines: LockEngine[] = [];

  function engine(): LockEngine {
    const client = backend.client();
    clients.push(client);
    const created = createLockEngine({ redis: client, storeTimeout: 5_000 });
    engines.push(created);
    return created;
  }

  async function run(
    configs: Omit<FamilyWorkerConfig, 'port' | 'clusterPorts'>[],
  ): Promise<{ sections: Interval[]; writes: Interval[] }> {
    const results = await runWorkers<FamilyWorkerResult>(
      'family-worker',
      configs.map((config) => ({ ...config, ...backend.where })),
      60_000,
    );
    return {
      sections: results.flatMap((result) => result.sections.map(fromWire)),
      writes: results.flatMap((result) => result.writes.map(fromWire)),
    };
  }

  const times = <T>(config: T): T[] => Array.from({ length: PROCESSES }, () => config);

  beforeAll(async () => {
    backend = await start();
  }, 30_000);

  afterEach(async () => {
    await killLiveWorkers();
    await Promise.all(engines.splice(0).map((created) => created.close()));
    for (const client of clients.splice(0)) client.disconnect();
  });

  afterAll(() => backend?.stop());

  it('semaphore: never more than limit 3 holders at once; the checker catches limit 4 exceeding 3', async () => {
    const workload = { workers: WORKERS, holdMs: 3, iterations: 12 };
    const limited = await run(times({ ...workload, key: 'family:{sem}', limit: 3 }));
    const control = await run(times({ ...workload, key: 'family:{sem-control}', limit: 4 }));
    reportFigures('semaphore across processes', {
      sections: limited.sections.length,
      'most at once (limit 3)': maxConcurrent(limited.sections),
      'most at once (control, limit 4)': maxConcurrent(control.sections),
    });
    expect(limited.sections).toHaveLength(PROCESSES * WORKERS * 12);
    expect(maxConcurrent(limited.sections)).toBe(3);
    expect(maxConcurrent(control.sections)).toBeGreaterThan(3);
  });

  it('read-write: readers overlap each other, and no writer overlaps anyone', async () => {
    const workload = { workers: WORKERS, holdMs: 3, iterations: 12, writeEvery: 4 };
    const { sections: reads, writes } = await run(times({ ...workload, key: 'family:{rw}' }));
    reportFigures('read-write across processes', {
      reads: reads.length,
      writes: writes.length,
      'most readers at once': maxConcurrent(reads),
    });
    expect(writes).toHaveLength(PROCESSES * WORKERS * 3);
    expect(writerOverlaps(writes, reads)).toBe(0);
    expect(maxConcurrent(reads)).toBeGreaterThan(1);
  });

  it('a writer behind a continuous stream of readers gets in within 2 × their hold time', async () => {
    const holdMs = 100;
    const key = 'family:{stream}';
    const readers = times({ key, workers: WORKERS, holdMs, untilMs: 2_000 }).map((config) =>
      ChildWorker.spawn('family-worker', { ...config, ...backend.where }),
    );
    await Promise.all(readers.map((worker) => worker.next('ready', 20_000)));
    readers.forEach((worker) => worker.send({ type: 'start' }));
    const writers = engine();
    // Let the stream run for a few hold times before the writer comes.
    await sleep(4 * holdMs);
    const lag = loopLag();
    const askedAt = process.hrtime.bigint();
    const lock = await writers.acquire(key, { mode: 'write', wait: 10_000 });
    const waited = Number(process.hrtime.bigint() - askedAt) / 1e6;
    // Up to one more hold time for this process's event-loop delay: a starved writer waits
    // for the whole stream (2 s).
    const slack = Math.min(lag.stop(), holdMs);
    await lock.release();
    const results = await Promise.all(readers.map((worker) => worker.next('result', 20_000)));
    const reads = results.flatMap((result) => (result.value as FamilyWorkerResult).sections);
    reportFigures('writer behind a reader stream', { 'writer waited (ms)': waited });
    // Readers were in when the writer asked: the stream was really there.
    expect(reads.map(fromWire).some(([enter, exit]) => enter < askedAt && askedAt < exit)).toBe(
      true,
    );
    expect(waited).toBeLessThan(2 * holdMs + slack);
  });

  it("frees a SIGKILLed holder's slot when its lease ends, and refuses a caller with another limit", async () => {
    const key = 'family:{killed}';
    const ttl = 1_500;
    const holder = ChildWorker.spawn('family-worker', {
      ...backend.where,
      key,
      workers: 0,
      holdMs: 0,
      holdOnce: { limit: 1, ttl },
    });
    await holder.next('ready', 20_000);
    holder.send({ type: 'start' });
    await holder.next('holding', 20_000);
    const locks = engine();
    const mismatch = await errorOf(() => locks.acquire(key, { limit: 2, wait: 0 }));
    expect(mismatch).toBeInstanceOf(LockOptionsError);
    expect(String(mismatch)).toMatch(/held as a semaphore of limit 1/);
    expect(await locks.tryAcquire(key, { limit: 1 })).toBeUndefined();

    const killedAt = performance.now();
    const lag = loopLag();
    await holder.kill();
    const lock = await locks.acquire(key, { limit: 1, wait: 2 * ttl });
    const freedAfter = performance.now() - killedAt;
    const slack = lag.stop();
    reportFigures('slot of a killed holder', { 'freed after (ms)': freedAfter });
    expect(lock.isHeld).toBe(true);
    await lock.release();
    // Renewed every ttl/3, the lease had at least 2/3 of its ttl left: the kill freed nothing.
    expect(freedAfter).toBeGreaterThan(ttl / 3);
    expect(freedAfter).toBeLessThan(ttl + 500 + slack);
  });
});
