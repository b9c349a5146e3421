import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  LockModule,
  LockService,
  LockStoreError,
  type LockModuleOptions,
} from '../../lib/index.js';
import { turnsKeyOf } from '../../lib/stores/redis/redis-commands.js';
import { CapturingLogger } from '../harness/capturing-logger.js';
import { describeCoreScenarios } from '../harness/core-scenarios.js';
import { percentile, reportFigures } from '../harness/figures.js';
import { TlsRedisServer } from '../harness/redis-tls.js';
import { errorOf, waitUntil } from '../harness/waits.js';

const ROUNDS = 5;

/** A Nest app with the lock module on `options`; the caller closes it. */
async function boot(options: LockModuleOptions): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [LockModule.forRoot(options)],
  }).compile();
  return moduleRef.init();
}

// One redis-server speaking TLS (certificates made by openssl for this file) on one port and
// plain TCP on another, which the harness checks and the last block points a TLS client at.
describe('TLS: the module over rediss', () => {
  let tls: TlsRedisServer;
  let probe: Redis;

  beforeAll(async () => {
    tls = await TlsRedisServer.start('yes');
    probe = tls.probe();
  });

  afterAll(async () => {
    probe?.disconnect();
    await tls?.stop();
  });

  describe('with a client certificate (tls-auth-clients yes)', () => {
    describeCoreScenarios('core', () => ({ redis: tls.options() }));

    it('tells at startup that a client without a certificate is refused', async () => {
      const logger = new CapturingLogger();
      const options = tls.options({ clientCertificate: false });
      await (await boot({ redis: options, logger, storeTimeout: 2_000 })).close();

      expect(logger.at('error').map(({ text }) => text)).toEqual([
        expect.stringMatching(
          /rediss:\/\/127\.0\.0\.1:\d+.*does not answer at startup.*require a client certificate/,
        ),
      ]);
    });
  });

  describe('with the CA only (tls-auth-clients optional), as { tls: { ca } }', () => {
    beforeAll(() => probe.config('SET', 'tls-auth-clients', 'optional'));

    describeCoreScenarios('core', () => ({ redis: tls.options({ clientCertificate: false }) }));
  });

  describe("with the user's own TLS clients", () => {
    const clients: Redis[] = [];
    const apps: INestApplicationContext[] = [];
    let locks: LockService[];

    beforeAll(async () => {
      await probe.config('SET', 'tls-auth-clients', 'optional');
      for (let i = 0; i < 2; i++) {
        const client = new Redis(tls.url, { tls: { ca: tls.certificates.ca } });
        clients.push(client);
        apps.push(await boot({ redis: client }));
      }
      locks = apps.map((app) => app.get(LockService));
    });

    afterAll(async () => {
      await Promise.all(apps.map((app) => app.close()));
      await Promise.all(clients.map((client) => client.quit()));
    });

    it('locks, fences, shares and hands off between two apps', async () => {
      const [a, b] = locks;
      await expect(a.withLock('tls:mutex', () => 'ran')).resolves.toBe('ran');
      const fenced = await a.acquire('tls:fenced', { fencing: true });
      await fenced.release();
      const next = await b.acquire('tls:fenced', { fencing: true });
      await next.release();
      expect(next.fence).toBeGreaterThan(fenced.fence!);
      const permits = [
        await a.acquire('tls:pool', { limit: 2 }),
        await b.acquire('tls:pool', { limit: 2 }),
      ];
      expect(await a.tryAcquire('tls:pool', { limit: 2 })).toBeUndefined();
      const readers = await Promise.all(permits.map((permit) => permit.release()));
      expect(readers).toEqual(['released', 'released']);
      const read = await a.acquire('tls:doc', { mode: 'read' });
      expect(await b.tryAcquire('tls:doc', { mode: 'write' })).toBeUndefined();
      await read.release();
    });

    it('wakes a waiter in the other app by its release notification', async () => {
      const [holderApp, waiterApp] = locks;
      const times: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const held = await holderApp.acquire('tls:handoff');
        const waiting = waiterApp.acquire('tls:handoff', { wait: 5_000 });
        // Parked: its attempt failed and queued it, so only a wake-up (or a 1 s poll) remains.
        await waitUntil('the waiter to queue', () => probe.exists(turnsKeyOf('lock:tls:handoff')));
        const releasedAt = performance.now();
        await held.release();
        const lock = await waiting;
        times.push(performance.now() - releasedAt);
        await lock.release();
      }
      const sorted = [...times].sort((x, y) => x - y);
      reportFigures('TLS hand-off between two apps (ms)', {
        rounds: ROUNDS,
        median: Number(percentile(sorted, 0.5).toFixed(1)),
        max: Number(sorted.at(-1)!.toFixed(1)),
      });
      // The poll would take up to pollCap (1 s); the notification takes a round trip or two.
      expect(sorted.at(-1)).toBeLessThan(900);
    });
  });

  describe('rediss:// pointed at the plain port', () => {
    const STORE_TIMEOUT = 2_000;
    let app: INestApplicationContext;
    let logger: CapturingLogger;
    let startup: number;

    beforeAll(async () => {
      logger = new CapturingLogger();
      const started = performance.now();
      app = await boot({
        redis: `rediss://127.0.0.1:${tls.server.port}`,
        storeTimeout: STORE_TIMEOUT,
        logger,
      });
      startup = performance.now() - started;
    });

    afterAll(() => app && app.close());

    it('fails the startup check before storeTimeout, saying the handshake did not complete', () => {
      expect(startup).toBeLessThan(STORE_TIMEOUT);
      const errors = logger.at('error').map(({ text }) => text);
      expect(errors).toEqual([expect.stringContaining('does not answer at startup')]);
      expect(errors[0]).toContain(`(rediss://127.0.0.1:${tls.server.port})`);
      expect(errors[0]).toMatch(/did not complete the TLS handshake, as a port without TLS does/);
    });

    it('then fails each call at once, with the same reason', async () => {
      const locks = app.get(LockService);
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const error = await errorOf(() => locks.tryAcquire('tls:down'));
        expect(performance.now() - started).toBeLessThan(STORE_TIMEOUT / 4);
        expect(error).toBeInstanceOf(LockStoreError);
        expect(String((error as Error).message)).toMatch(/TLS handshake/);
      }
    });
  });
});
