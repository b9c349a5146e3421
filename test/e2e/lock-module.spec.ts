import { once } from 'node:events';
import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type INestApplicationContext,
} from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { filter, firstValueFrom } from 'rxjs';
import { LockModule } from '../../lib/nest/lock.module.js';
import { LockService } from '../../lib/nest/lock.service.js';
import {
  LockOptionsError,
  LockShutdownError,
  LockStoreError,
} from '../../lib/errors/lock.errors.js';
import type {
  LockModuleOptions,
  LockOptionsFactory,
} from '../../lib/nest/interfaces/lock-module-options.interface.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { LOCK_REDIS_CLIENT, LOCK_STORE } from '../../lib/nest/lock-store.tokens.js';
import { LockTestingModule, MemoryLockStore } from '../../lib/testing/index.js';
import { CapturingLogger } from '../harness/capturing-logger.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/waits.js';

/** A service in a module that does not import LockModule: only a global LockModule serves it. */
@Injectable()
class ReportService {
  constructor(@Inject(LockService) readonly locks: LockService) {}
}

@Module({ providers: [ReportService], exports: [ReportService] })
class ReportModule {}

/** Options from ConfigService, as an app would read them from its environment. */
@Injectable()
class LockConfig implements LockOptionsFactory {
  constructor(@Inject(ConfigService) private readonly config: ConfigService) {}

  createLockOptions(): LockModuleOptions {
    return {
      redis: this.config.getOrThrow<string>('lock.url'),
      keyPrefix: this.config.get<string>('lock.prefix'),
    };
  }
}

/**
 * The client the module created for itself, as the documented `LOCK_REDIS_CLIENT` token
 * injects it: the test watches it close.
 */
function moduleClientOf(app: INestApplicationContext): Redis {
  const client: unknown = app.get(LOCK_REDIS_CLIENT);
  if (!(client instanceof Redis)) throw new Error('LOCK_REDIS_CLIENT is not one Redis client');
  return client;
}

/** Resolves once `client` has ended, at once if it already has. */
async function ended(client: Redis): Promise<void> {
  if (client.status !== 'end') await once(client, 'end');
}

describe('LockModule in a Nest app (real Redis)', () => {
  let server: RedisServer;
  let admin: Redis;
  const apps: INestApplicationContext[] = [];
  const clients: Redis[] = [];

  function config(prefix: string): Promise<DynamicModule> {
    return ConfigModule.forRoot({
      ignoreEnvFile: true,
      load: [() => ({ lock: { url: server.url, prefix } })],
    });
  }

  async function start(
    imports: NonNullable<Parameters<typeof Test.createTestingModule>[0]['imports']>,
  ): Promise<INestApplicationContext> {
    const app = await Test.createTestingModule({ imports }).compile();
    apps.push(app);
    return app.init();
  }

  /** A client the test owns and quits after the test. */
  function clientOfTest(): Redis {
    const client = server.client();
    clients.push(client);
    return client;
  }

  async function close(app: INestApplicationContext): Promise<void> {
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  }

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = server.client();
  });

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await Promise.all(clients.splice(0).map((client) => client.quit()));
  });

  afterAll(async () => {
    await admin.quit();
    await server.stop();
  });

  describe('configuration', () => {
    it('forRoot({ redis: url }) locks in that Redis', async () => {
      const app = await start([LockModule.forRoot({ redis: server.url })]);

      await app.get(LockService).withLock('config:url', async (lock) => {
        expect(await admin.get('lock:config:url')).toBe(lock.token);
      });

      expect(await admin.exists('lock:config:url')).toBe(0);
    });

    it('forRootAsync({ useFactory }) builds the options from ConfigService', async () => {
      const app = await start([
        LockModule.forRootAsync({
          imports: [config('factory:')],
          inject: [ConfigService],
          useFactory: (settings: ConfigService) => ({
            redis: settings.getOrThrow<string>('lock.url'),
            keyPrefix: settings.get<string>('lock.prefix'),
          }),
        }),
      ]);

      await app.get(LockService).withLock('k', async (lock) => {
        expect(await admin.get('factory:k')).toBe(lock.token);
      });
    });

    it('forRootAsync({ useClass }) builds the options with createLockOptions()', async () => {
      const app = await start([
        LockModule.forRootAsync({ imports: [config('class:')], useClass: LockConfig }),
      ]);

      await app.get(LockService).withLock('k', async (lock) => {
        expect(await admin.get('class:k')).toBe(lock.token);
      });
    });

    // The app gets a client of the test's, so a bootstrap that fails leaves no connection open.
    it.each<[string, (redis: Redis) => DynamicModule]>([
      ['forRoot', (redis) => LockModule.forRoot({ redis, isGlobal: true })],
      [
        'forRootAsync',
        (redis) => LockModule.forRootAsync({ isGlobal: true, useFactory: () => ({ redis }) }),
      ],
    ])('%s with isGlobal: true serves modules that do not import it', async (_form, lockModule) => {
      const app = await start([lockModule(clientOfTest()), ReportModule]);

      const lock = await app.get(ReportService).locks.acquire('config:global');

      expect(await admin.get('lock:config:global')).toBe(lock.token);
      await lock.release();
    });

    it('without isGlobal, serves only the modules that import it', async () => {
      const store = new MemoryLockStore();

      await expect(start([LockModule.forRoot({ store }), ReportModule])).rejects.toThrow(
        /LockService/,
      );
    });

    // 0 sends every release through Redis; 8 (the default) lets the next waiter here inherit.
    it.each([
      [0, false],
      [8, true],
    ])('accepts localHandoffs %d (next waiter inherits the lease: %s)', async (n, inherits) => {
      const app = await start([LockModule.forRoot({ redis: server.url, localHandoffs: n })]);
      const locks = app.get(LockService);
      const holder = await locks.acquire('config:handoffs');
      const waiting = locks.acquire('config:handoffs');
      waiting.catch(() => undefined);

      await holder.release();
      const lock = await waiting;

      expect(lock.token === holder.token).toBe(inherits);
      expect(await admin.get('lock:config:handoffs')).toBe(lock.token);
      await lock.release();
    });
  });

  describe('shutdown', () => {
    it('leaves a client the user passed in open', async () => {
      const client = clientOfTest();
      const listeners = ['ready', 'error', 'close'].map((event) => client.listenerCount(event));
      const app = await start([LockModule.forRoot({ redis: client })]);
      const locks = app.get(LockService);
      // A waiter makes the store open its own pub/sub connection too.
      const held = await locks.acquire('shutdown:user-client');
      const waiting = locks.acquire('shutdown:user-client');
      await held.release();
      await (await waiting).release();

      await close(app);

      expect(client.status).toBe('ready');
      expect(await client.ping()).toBe('PONG');
      expect(await client.exists('lock:shutdown:user-client')).toBe(0);
      // The module stopped following the client's connection events.
      expect(['ready', 'error', 'close'].map((event) => client.listenerCount(event))).toEqual(
        listeners,
      );
    });

    it.each<[string, () => LockModuleOptions['redis']]>([
      ['a URL', () => server.url],
      ['connection options', () => ({ host: '127.0.0.1', port: server.port })],
    ])('closes the client it created from %s', async (_form, redis) => {
      const app = await start([LockModule.forRoot({ redis: redis() })]);
      const locks = app.get(LockService);
      await locks.withLock('shutdown:own-client', () => undefined);
      const client = moduleClientOf(app);
      expect(client.status).toBe('ready');

      await close(app);

      await ended(client);
      expect(client.status).toBe('end');
    });

    it('closes its own client within a second when Redis stops answering its QUIT', async () => {
      const app = await start([LockModule.forRoot({ redis: server.url })]);
      const client = moduleClientOf(app);
      server.pause();
      try {
        const startedAt = performance.now();
        await close(app);
        expect(performance.now() - startedAt).toBeLessThan(1_500);
        await ended(client);
      } finally {
        server.resume();
      }
    });

    it("fails pending waiters, aborts held locks' signals, and releases each as its holder ends", async () => {
      const app = await start([LockModule.forRoot({ redis: server.url, shutdownTimeout: 5_000 })]);
      const locks = app.get(LockService);
      const held = await locks.acquire('shutdown:held');
      const waiter = locks.acquire('shutdown:held', { wait: Infinity }).catch((error) => error);
      const aborted = new Promise((resolve) => held.signal.addEventListener('abort', resolve));

      const closing = close(app);
      await aborted;

      expect(await waiter).toBeInstanceOf(LockShutdownError);
      expect(await waiter).toMatchObject({ message: expect.stringMatching(/shutting down/) });
      expect(held.signal.reason).toBeInstanceOf(LockShutdownError);
      // Still held while its holder has not let go.
      expect(await admin.get('lock:shutdown:held')).toBe(held.token);
      expect(await held.release()).toBe('released');
      await closing;
      expect(await admin.exists('lock:shutdown:held')).toBe(0);
    });

    it('leaves a lock still held at shutdownTimeout to expire, never deleting it, and says so once', async () => {
      const logger = new CapturingLogger();
      const app = await start([
        LockModule.forRoot({ redis: server.url, shutdownTimeout: 100, logger }),
      ]);
      const locks = app.get(LockService);
      const held = await locks.acquire('shutdown:stuck', { ttl: 1_000 });
      await locks.acquire('shutdown:also', { ttl: 1_000 });

      await close(app);

      expect(logger.lines).toEqual([
        {
          level: 'log',
          text: 'Shutdown waits up to 100 ms for 2 held lock(s) to be released: "shutdown:stuck", "shutdown:also".',
        },
      ]);
      expect(held.signal.aborted).toBe(true);
      expect(await admin.get('lock:shutdown:stuck')).toBe(held.token);
      await waitUntil(
        'the lease to run out',
        async () => !(await admin.exists('lock:shutdown:stuck')),
      );
    });

    it('fails a waiter for a lock held elsewhere, and leaves that lock alone', async () => {
      await admin.set('lock:shutdown:foreign', 'another-process', 'PX', 60_000);
      const app = await start([LockModule.forRoot({ redis: server.url })]);
      const locks = app.get(LockService);
      const contended = firstValueFrom(locks.events$.pipe(filter((e) => e.type === 'contended')));
      const waiter = locks.acquire('shutdown:foreign', { wait: Infinity }).catch((error) => error);
      // Close once the waiter is queued, so this covers the queue's shutdown path; an attempt
      // still in flight at close() takes another path.
      await contended;

      await close(app);

      expect(await waiter).toBeInstanceOf(LockStoreError);
      expect(await waiter).toMatchObject({ message: expect.stringMatching(/shutting down/) });
      expect(await admin.get('lock:shutdown:foreign')).toBe('another-process');
      await admin.del('lock:shutdown:foreign');
    });

    it('closes an app built by NestFactory: locks released, its client ended', async () => {
      @Module({ imports: [LockModule.forRoot({ redis: server.url })] })
      class AppModule {}
      const app = await NestFactory.createApplicationContext(AppModule, {
        logger: false,
        abortOnError: false,
      });
      apps.push(app);
      const locks = app.get(LockService);
      const held = await locks.acquire('factory:app');
      held.signal.addEventListener('abort', () => void held.release());

      await close(app);

      expect(held.isHeld).toBe(false);
      expect(await admin.exists('lock:factory:app')).toBe(0);
      await ended(moduleClientOf(app));
    });
  });

  describe('bad module options fail at bootstrap with LockOptionsError', () => {
    const redis = (): string => server.url;

    it.each<[string, () => Record<string, unknown>, RegExp]>([
      [
        'both redis and store',
        () => ({ redis: redis(), store: new MemoryLockStore() }),
        /exactly one/,
      ],
      ['neither redis nor store', () => ({}), /exactly one/],
      [
        'an unknown option',
        () => ({ redis: redis(), prefix: 'x:' }),
        /unknown option "prefix". Known options: redis, .*isGlobal/,
      ],
      ['defaults.ttl 0', () => ({ redis: redis(), defaults: { ttl: 0 } }), /"ttl"/],
      ['defaults.wait -1', () => ({ redis: redis(), defaults: { wait: -1 } }), /"wait"/],
      ['an unknown default', () => ({ redis: redis(), defaults: { tll: 5 } }), /"tll"/],
      [
        'a default signal',
        () => ({ redis: redis(), defaults: { signal: new AbortController().signal } }),
        /"signal"/,
      ],
      ['busyStatusCode 200', () => ({ redis: redis(), busyStatusCode: 200 }), /busyStatusCode/],
      ['busyStatusCode 600', () => ({ redis: redis(), busyStatusCode: 600 }), /busyStatusCode/],
      ['busyStatusCode 409.5', () => ({ redis: redis(), busyStatusCode: 409.5 }), /busyStatusCode/],
      ['busyStatusCode "409"', () => ({ redis: redis(), busyStatusCode: '409' }), /busyStatusCode/],
      ['storeTimeout 0', () => ({ redis: redis(), storeTimeout: 0 }), /storeTimeout/],
      ['pollCap NaN', () => ({ redis: redis(), pollCap: Number.NaN }), /pollCap/],
      // A waiting writer's mark lasts `2 × pollCap + 100` ms, sent as PX: Redis refuses a fraction.
      [
        'pollCap 100.3',
        () => ({ redis: redis(), pollCap: 100.3 }),
        /"pollCap" must be a positive whole/,
      ],
      ['storeTimeout 2500.5', () => ({ redis: redis(), storeTimeout: 2500.5 }), /storeTimeout/],
      ['defaults as a Date', () => ({ redis: redis(), defaults: new Date() }), /got a Date/],
      ['replicas as a Map', () => ({ redis: redis(), replicas: new Map() }), /"replicas"/],
      ['localHandoffs -1', () => ({ redis: redis(), localHandoffs: -1 }), /localHandoffs/],
      ['localHandoffs 1.5', () => ({ redis: redis(), localHandoffs: 1.5 }), /localHandoffs/],
      ['localHandoffs "8"', () => ({ redis: redis(), localHandoffs: '8' }), /localHandoffs/],
      ['a keyPrefix with a newline', () => ({ redis: redis(), keyPrefix: 'a\n' }), /keyPrefix/],
      ['redis as a number', () => ({ redis: 6379 }), /"redis"/],
      ['redis as no URL', () => ({ redis: 'not a url' }), /"redis" is not a Redis URL/],
      [
        'a redlock node as no URL, its password kept out of the message',
        () => ({ redlock: [redis(), 'redis://:secret@host:port'] }),
        /^(?!.*secret).*"redlock\[1\]" is not a Redis URL/,
      ],
    ])('%s (forRoot)', async (_name, options, message) => {
      const bootstrap = start([LockModule.forRoot(options() as LockModuleOptions)]);

      await expect(bootstrap).rejects.toBeInstanceOf(LockOptionsError);
      await expect(bootstrap).rejects.toThrow(message);
    });

    it('also when forRootAsync builds the options', async () => {
      const bootstrap = start([
        LockModule.forRootAsync({
          useFactory: () => ({ redis: server.url, busyStatusCode: 200 }),
        }),
      ]);

      await expect(bootstrap).rejects.toBeInstanceOf(LockOptionsError);
    });

    it('also through NestFactory.createApplicationContext', async () => {
      @Module({ imports: [LockModule.forRoot({ redis: server.url, defaults: { ttl: 0 } })] })
      class AppModule {}

      await expect(
        NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false }),
      ).rejects.toBeInstanceOf(LockOptionsError);
    });
  });
});

describe('LockModule injection tokens', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(() => server?.stop());

  it('provides the store and the ioredis client it created, open while the app runs', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [LockModule.forRoot({ redis: server.url })],
    }).compile();
    const app = await moduleRef.init();
    const client = app.get<Redis>(LOCK_REDIS_CLIENT);
    expect(await client.ping()).toBe('PONG');
    expect(app.get(LOCK_STORE)).toBeInstanceOf(RedisLockStore);
    await app.close();
    await ended(client);
  });

  it('provides the memory store of LockTestingModule, and no Redis client', async () => {
    const store = new MemoryLockStore();
    const moduleRef = await Test.createTestingModule({
      imports: [LockTestingModule.forRoot({ store })],
    }).compile();
    expect(moduleRef.get(LOCK_STORE)).toBe(store);
    expect(moduleRef.get(LOCK_REDIS_CLIENT)).toBeUndefined();
    await moduleRef.close();
  });
});
