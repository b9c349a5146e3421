import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockStoreError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { RedisServer } from '../harness/redis-server.js';
import { useRedisServer } from '../harness/use-redis.js';
import { waitUntil } from '../harness/waits.js';
import { CapturingLogger } from '../harness/capturing-logger.js';

const master = useRedisServer();
let replica: RedisServer | undefined;
const engines: LockEngine[] = [];

/** An engine that needs one replica to acknowledge every grant. */
let logger: CapturingLogger;

async function engine(localHandoffs: number): Promise<LockEngine> {
  logger = new CapturingLogger();
  const created = createLockEngine({
    logger,
    redis: { host: '127.0.0.1', port: master.server.port },
    replicas: { count: 1, timeout: 100 },
    storeTimeout: 2_000,
    localHandoffs,
  });
  engines.push(created);
  await created.init();
  return created;
}

/**
 * This replica, not one an earlier test stopped that the master has yet to drop, is in sync and
 * acknowledges writes, as every grant in these tests will need.
 */
async function replicaAcknowledges(port: number): Promise<boolean> {
  const info = await master.probe.info('replication');
  if (!info.includes(`port=${port},state=online`)) return false;
  await master.probe.set('replica:check', port);
  return (await master.probe.wait(1, 100)) >= 1;
}

beforeEach(async () => {
  replica = await RedisServer.start(['--replicaof', '127.0.0.1', String(master.server.port)]);
  await waitUntil('the replica to acknowledge', () => replicaAcknowledges(replica!.port), 10_000);
  await master.probe.del('replica:check');
});

afterEach(async () => {
  await Promise.all(engines.splice(0).map((created) => created.close()));
  await replica?.stop();
  await master.probe.flushall();
});

// Without `replicas`, both paths give the next waiter here the key with no acquire of its own:
// a local hand-off (the lease passes on), or a release that sets the key for it (a successor).
describe.each([
  ['a local hand-off', 16],
  ['a successor set by the release', 0],
])('with replicas: { count: 1 }, %s', (_path, localHandoffs) => {
  it('gives the next waiter here the key only through an acknowledged acquire', async () => {
    const locks = await engine(localHandoffs);
    const holder = await locks.acquire('order:1');
    const waiting = locks.acquire('order:1', { wait: 2_000 }).then(
      (lock) => lock,
      (error: unknown) => error,
    );
    await replica!.stop();

    await holder.release();
    const outcome = await waiting;

    expect(outcome).toBeInstanceOf(LockStoreError);
    expect((outcome as Error).message).toMatch(/required replicas acknowledged/);
    expect(await master.probe.exists('lock:order:1')).toBe(0);
    expect(locks.heldCount).toBe(0);
    // The master answered: too few replicas is not an outage of the store.
    expect(logger.lines.filter((line) => /stopped answering/.test(line.text))).toEqual([]);
  });

  it('still hands the key on while the replica acknowledges', async () => {
    const locks = await engine(localHandoffs);
    const holder = await locks.acquire('order:2');
    const waiting = locks.acquire('order:2', { wait: 2_000 });

    await holder.release();
    const lock = await waiting;

    // A fresh token: the waiter took the key by its own acquire, which WAIT confirmed.
    expect(lock.token).not.toBe(holder.token);
    expect(await master.probe.get('lock:order:2')).toBe(lock.token);
    await lock.release();
  });
});
