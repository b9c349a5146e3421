import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { RedisOptions } from 'ioredis';
import { DistributedLock, LockModule, LockService } from '../../lib/index.js';
import { CapturingLogger } from './capturing-logger.js';
import { ChildWorker } from './child-workers.js';
import type { CoreWaiterConfig } from '../fixtures/core-waiter.js';
import { clientUnderTest } from './client-under-test.js';

/** How the core scenarios reach Redis: as a user of the module would configure it. */
export interface CoreTarget {
  /**
   * LockModule's `redis` option, given as is to the waiter in another process too: a URL, or
   * ioredis options that survive JSON (an ACL user's credentials, a TLS `ca` as a PEM string).
   */
  readonly redis: string | RedisOptions;
  /** The module's `keyPrefix`. @default 'lock:' */
  readonly keyPrefix?: string;
}

/** The scenarios beyond the mutex, which need more of Redis (e.g. `TIME` in the ACL). */
export type CoreFeature = 'fencing' | 'semaphore' | 'read-write';
const EVERY_FEATURE: readonly CoreFeature[] = ['fencing', 'semaphore', 'read-write'];

/** Slowest a hand-off to another process may be: its wake-up, not the 1 s poll, must do it. */
const HANDOFF_MS = 900;

/** A provider with a decorated method, to show `@DistributedLock` serialises its callers. */
@Injectable()
class CoreStock {
  running = 0;
  mostAtOnce = 0;

  // Literal braces doubled: the key is `{stock}:<sku>`, a Redis Cluster hash tag.
  @DistributedLock('{{stock}}:{0}', { wait: 3_000 })
  async reserve(_sku: string): Promise<void> {
    this.mostAtOnce = Math.max(this.mostAtOnce, ++this.running);
    await new Promise((resolve) => setTimeout(resolve, 20));
    this.running--;
  }
}

/**
 * The core of the integration suite as one reusable run, registered in a `describe` named
 * `name`: mutex, decorator, hand-off to a waiter in another process on a hash-tagged key,
 * fencing, semaphore and read-write lock (`features`), all through a Nest app on `target()`
 * (read in `beforeAll`). It checks too that the module logged no error or warning: a refused
 * command would show there. Specs call it with the connection they test: an ACL user, TLS.
 */
export function describeCoreScenarios(
  name: string,
  target: () => CoreTarget,
  features: readonly CoreFeature[] = EVERY_FEATURE,
): void {
  describe(name, () => {
    const logger = new CapturingLogger();
    let app: INestApplicationContext;
    let locks: LockService;
    let settings: CoreTarget;

    beforeAll(async () => {
      settings = target();
      const { redis, keyPrefix } = settings;
      const moduleRef = await Test.createTestingModule({
        imports: [LockModule.forRoot({ redis, keyPrefix, logger, client: clientUnderTest() })],
        providers: [CoreStock],
      }).compile();
      app = await moduleRef.init();
      locks = app.get(LockService);
    });

    afterAll(() => app?.close());

    it('mutex: takes, refuses while held, releases; withLock', async () => {
      const lock = await locks.acquire('core:mutex');
      expect(await locks.tryAcquire('core:mutex')).toBeUndefined();
      await expect(lock.release()).resolves.toBe('released');
      await expect(locks.withLock('core:mutex', () => 'ran')).resolves.toBe('ran');
    });

    it('@DistributedLock: callers of a hash-tagged key run one at a time', async () => {
      const stock = app.get(CoreStock);
      await Promise.all([1, 2, 3].map(() => stock.reserve('1')));
      expect(stock.mostAtOnce).toBe(1);
    });

    it('hand-off: a waiter in another process gets a hash-tagged key on release', async () => {
      const key = '{stock}:2';
      const lock = await locks.acquire(key);
      const config: CoreWaiterConfig = {
        redis: settings.redis,
        keyPrefix: settings.keyPrefix ?? 'lock:',
        key,
      };
      const waiter = ChildWorker.spawn('core-waiter', config);
      try {
        await waiter.next('ready', 8_000);
        waiter.send({ type: 'start' });
        await waiter.next('parked', 3_000);
        const releasedAt = performance.now();
        await lock.release();
        await waiter.next('result', HANDOFF_MS);
        expect(performance.now() - releasedAt).toBeLessThan(HANDOFF_MS);
      } finally {
        await waiter.stop();
      }
    });

    if (features.includes('fencing')) {
      it('fencing: each holder gets a greater fence', async () => {
        const first = await locks.acquire('core:fenced', { fencing: true });
        await first.release();
        const second = await locks.acquire('core:fenced', { fencing: true });
        await second.release();
        expect(second.fence).toBeGreaterThan(first.fence!);
      });
    }

    if (features.includes('semaphore')) {
      it('semaphore: admits `limit` holders, then the next on release', async () => {
        const options = { limit: 2 };
        const held = [await locks.acquire('core:pool', options)];
        held.push(await locks.acquire('core:pool', options));
        expect(await locks.tryAcquire('core:pool', options)).toBeUndefined();
        await held[0].release();
        const third = await locks.acquire('core:pool', { ...options, wait: 1_000 });
        await Promise.all([third.release(), held[1].release()]);
      });
    }

    if (features.includes('read-write')) {
      it('read-write: readers share, a writer waits for them', async () => {
        const readers = [await locks.acquire('core:doc', { mode: 'read' })];
        readers.push(await locks.acquire('core:doc', { mode: 'read' }));
        expect(await locks.tryAcquire('core:doc', { mode: 'write' })).toBeUndefined();
        const writer = locks.acquire('core:doc', { mode: 'write', wait: 2_000 });
        await Promise.all(readers.map((reader) => reader.release()));
        await (await writer).release();
      });
    }

    it('logged no error or warning (nothing was refused)', () => {
      expect(logger.at('warn')).toEqual([]);
    });
  });
}
