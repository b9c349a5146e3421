import type { LockOptions } from '../../lib/engine/request/lock-options.interface.js';
import { LockKeyError, LockOptionsError } from '../../lib/errors/lock.errors.js';
import { LockService } from '../../lib/nest/lock.service.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { callsBetween, commandCalls } from '../harness/command-stats.js';
import { outcome } from '../harness/waits.js';
import { scanKeys } from '../harness/scan-keys.js';
import { untyped, type Locker } from '../harness/bad-inputs.js';

const badKeys: [string, unknown][] = [
  ['an empty key', ''],
  ['a key over 1 KiB', 'k'.repeat(1025)],
  ['a key over 1 KiB in UTF-8 but not in length', 'é'.repeat(513)],
  ['a key with a newline', 'a\nb'],
  ['a key with a NUL', 'a\u0000b'],
  ['a key with DEL', 'a\u007fb'],
  ['a key with an escape sequence', '\u001b[2J'],
  ['a number', 42],
  ['an object', { id: 1 }],
  ['null', null],
  ['undefined', undefined],
  ['an empty key list', []],
  ['a key list with an empty key', ['ok', '']],
  ['a key list with a number', ['ok', 7]],
];

const badOptions: [string, unknown][] = [
  ['ttl 0', { ttl: 0 }],
  ['ttl -1', { ttl: -1 }],
  ['ttl NaN', { ttl: NaN }],
  ['ttl 1.5', { ttl: 1.5 }],
  ['ttl Infinity', { ttl: Infinity }],
  ['ttl 2**31', { ttl: 2 ** 31 }],
  ['ttl as a string', { ttl: '1000' }],
  ['wait -1', { wait: -1 }],
  ['wait NaN', { wait: NaN }],
  ['an unknown option (tll)', { tll: 5 }],
  ['options that are not an object', 'fast'],
  ['null options', null],
];

describe('bad input', () => {
  const redis = useRedisServer();

  const lockers: [string, () => { locker: Locker; close(): Promise<void> }][] = [
    [
      'the engine',
      () => {
        const engine = createTestEngine(redis.client);
        return { locker: untyped(engine), close: () => engine.close() };
      },
    ],
    [
      'LockService',
      () => {
        const service = new LockService({ redis: redis.client });
        return {
          locker: untyped(service),
          close: () => service.onApplicationShutdown(),
        };
      },
    ],
  ];

  describe.each(lockers)('through %s', (_, create) => {
    let locker: Locker;
    let close: () => Promise<void>;

    beforeEach(() => {
      ({ locker, close } = create());
    });

    afterEach(async () => {
      await close();
    });

    /** Runs every call, then proves Redis saw nothing from them and holds no key. */
    async function expectRejectedBeforeRedis(
      calls: (() => Promise<unknown>)[],
      errorType: typeof LockKeyError | typeof LockOptionsError,
    ): Promise<void> {
      const before = await commandCalls(redis.probe);
      for (const call of calls) {
        const result = await outcome(call());
        expect(result.error).toBeInstanceOf(errorType);
        expect(result.value).toBeUndefined();
      }
      await redis.client.ping(); // the engine's connection has run anything sent before this
      expect(callsBetween(before, await commandCalls(redis.probe))).toEqual({});
      expect(await scanKeys(redis.probe)).toEqual([]);
    }

    it.each(badKeys)('rejects %s with LockKeyError before any Redis call', async (_, key) => {
      let ran = 0;
      await expectRejectedBeforeRedis(
        [
          () => locker.acquire(key),
          () => locker.tryAcquire(key),
          () => locker.withLock(key, () => void ran++),
        ],
        LockKeyError,
      );
      expect(ran).toBe(0);
    });

    it.each(badOptions)(
      'rejects %s with LockOptionsError before any Redis call',
      async (_, options) => {
        let ran = 0;
        await expectRejectedBeforeRedis(
          [
            () => locker.acquire('k', options),
            () => locker.tryAcquire('k', options),
            () => locker.withLock('k', () => void ran++, options),
          ],
          LockOptionsError,
        );
        expect(ran).toBe(0);
      },
    );

    it('accepts the edges of the valid ranges, and the probe sees those calls', async () => {
      const before = await commandCalls(redis.probe);
      const edges: LockOptions[] = [{ ttl: 2 ** 31 - 1, wait: 0 }, { wait: Infinity }];
      for (const options of edges) {
        const lock = (await locker.acquire('k'.repeat(1024), options)) as {
          release(): Promise<string>;
        };
        expect(['released', 'expired']).toContain(await lock.release());
      }
      // A 1 ms lease is valid input, but over by the time any answer comes: given back, never held.
      const tiny = await locker.acquire('k'.repeat(1024), { ttl: 1, wait: 0 }).then(
        (lock) => (lock as { release(): Promise<string> }).release(),
        (error: Error) => error.message,
      );
      expect(tiny).toMatch(/^(released|expired)$|later than the lease of 1 ms/);
      // The same probe that saw nothing above does see real calls.
      const seen = callsBetween(before, await commandCalls(redis.probe));
      // Each acquire is a SET NX PX, each release a compare-and-delete script.
      expect((seen.set ?? 0) + (seen.evalsha ?? 0)).toBeGreaterThanOrEqual(6);
    });
  });
});
