import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { MAX_KEYS_PER_LOCK } from '../../lib/engine/request/lock-request.js';
import { LockOptionsError } from '../../lib/errors/lock.errors.js';
import { DistributedLock } from '../../lib/nest/decorators/distributed-lock.decorator.js';
import { LockModule } from '../../lib/nest/lock.module.js';
import { LockService } from '../../lib/nest/lock.service.js';
import {
  fencedWrite,
  MAX_FENCED_WRITES,
  type RedisWrite,
} from '../../lib/stores/redis/fenced-write.js';
import { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store.js';
import { createTestEngine, engineOn } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { errorOf } from '../harness/waits.js';
import { callsBetween, commandCalls } from '../harness/command-stats.js';
import { scanKeys } from '../harness/scan-keys.js';

// Inputs whose Redis cost grows with their size have a stated limit (see docs/guarantees.md#limits).
// Past it, a call fails with LockOptionsError, naming the limit, before anything reaches Redis;
// at it, the call goes through.
const items = (count: number): string[] => Array.from({ length: count }, (_, i) => `sku-${i}`);
const writes = (count: number): RedisWrite[] =>
  Array.from({ length: count }, (_, i) => ['SET', `stock:${i}`, '1'] as const);

/** The engine or `LockService`: both take locks the way users do. */
type Locker = Pick<LockService, 'acquire' | 'tryAcquire' | 'withLock'>;

@Injectable()
class Basket {
  reserved = 0;

  // The keys come from the call's arguments: their number is known only at call time.
  @DistributedLock((skus: string[]) => skus.map((sku) => `sku:${sku}`))
  async reserve(_skus: string[]): Promise<void> {
    this.reserved++;
  }
}

describe('inputs past a stated limit', () => {
  const redis = useRedisServer();
  afterEach(() => redis.probe.flushall());

  /** Runs each call, expecting LockOptionsError naming `limit`; Redis must have seen nothing. */
  async function refusedBeforeRedis(limit: string, ...calls: (() => unknown)[]): Promise<void> {
    const keysBefore = await scanKeys(redis.probe);
    const before = await commandCalls(redis.probe);
    for (const call of calls) {
      const error = await errorOf(call);
      expect(error).toBeInstanceOf(LockOptionsError);
      expect((error as Error).message).toContain(`(${limit})`);
    }
    await redis.client.ping(); // anything the code under test sent has run by now
    expect(callsBetween(before, await commandCalls(redis.probe))).toEqual({});
    // Only what was there before the calls: a module's process registration, written at init.
    expect(await scanKeys(redis.probe)).toEqual(keysBefore);
  }

  async function refusesOneKeyTooMany(locker: Locker): Promise<void> {
    const keys = items(MAX_KEYS_PER_LOCK + 1);
    let ran = 0;
    await refusedBeforeRedis(
      'MAX_KEYS_PER_LOCK',
      () => locker.acquire(keys),
      () => locker.tryAcquire(keys),
      () => locker.withLock(keys, () => ran++),
    );
    expect(ran).toBe(0);
    const lock = await locker.acquire(items(MAX_KEYS_PER_LOCK));
    expect(await lock.release()).toBe('released');
  }

  it('refuses a lock on more than MAX_KEYS_PER_LOCK keys: the engine', async () => {
    const engine = createTestEngine(redis.client);
    await refusesOneKeyTooMany(engine);
    await engine.close();
  });

  it('refuses a lock on more than MAX_KEYS_PER_LOCK keys: LockService', async () => {
    const service = new LockService({ redis: redis.client });
    await refusesOneKeyTooMany(service);
    await service.onApplicationShutdown();
  });

  it('refuses a lock on more than MAX_KEYS_PER_LOCK keys: Redlock', async () => {
    const engine = engineOn(new RedlockLockStore([redis.client]));
    await refusesOneKeyTooMany(engine);
    await engine.close();
  });

  it('refuses a lock on more than MAX_KEYS_PER_LOCK keys: @DistributedLock, at call time', async () => {
    const app = await Test.createTestingModule({
      imports: [LockModule.forRoot({ redis: redis.client })],
      providers: [Basket],
    }).compile();
    await app.init();
    const basket = app.get(Basket);

    await refusedBeforeRedis('MAX_KEYS_PER_LOCK', () =>
      basket.reserve(items(MAX_KEYS_PER_LOCK + 1)),
    );
    expect(basket.reserved).toBe(0);
    await basket.reserve(items(MAX_KEYS_PER_LOCK));
    expect(basket.reserved).toBe(1);
    await app.close();
  });

  it('refuses a fencedWrite of more than MAX_FENCED_WRITES writes', async () => {
    const write = (count: number) =>
      fencedWrite(redis.client, { fence: 1, fenceKey: 'stock:fence', writes: writes(count) });

    await refusedBeforeRedis('MAX_FENCED_WRITES', () => write(MAX_FENCED_WRITES + 1));
    expect(await write(MAX_FENCED_WRITES)).toEqual(writes(MAX_FENCED_WRITES).map(() => 'OK'));
  });
});
