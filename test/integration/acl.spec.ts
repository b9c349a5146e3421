import { readFileSync } from 'node:fs';
import type { INestApplicationContext } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockHealthIndicator } from '../../lib/health/index.js';
import {
  fencedWrite,
  lockErrorBody,
  LockModule,
  LockService,
  LockStoreRefusedError,
  type LockModuleOptions,
} from '../../lib/index.js';
import { createAclUser, documentedRule, userUrl } from '../harness/acl-rules.js';
import { CapturingLogger } from '../harness/capturing-logger.js';
import { describeCoreScenarios } from '../harness/core-scenarios.js';
import { RedisServer } from '../harness/redis-server.js';
import { errorOf } from '../harness/waits.js';

const PASSWORD = 'acl-test-password';
const CUSTOM_PREFIX = 'billing:locks:';

const mutex = documentedRule('mutex');
const everyFeature = documentedRule('every feature');
const inspection = documentedRule('inspection');
/** The fencedWrite rule for resources under `account:`, and its write ids' key pattern. */
const fencedWrites = documentedRule('fencedWrite on account keys');
const WRITE_IDS_PATTERN = '~{account:*';
const without = (rule: readonly string[], grant: string): string[] => {
  if (!rule.includes(grant)) throw new Error(`the rule has no ${grant} to take away`);
  return rule.filter((word) => word !== grant);
};

/** Users made from the documented rules (and the canaries: a rule with one grant taken away). */
const USERS: Record<string, readonly string[]> = {
  locks: everyFeature,
  billing: documentedRule(`every feature, keyPrefix ${CUSTOM_PREFIX}`),
  mutexonly: mutex,
  notime: without(everyFeature, '+time'),
  notagchannel: without(everyFeature, '&lock:*'),
  noset: without(everyFeature, '+set'),
  inspector: [...mutex, ...inspection],
  // What the pages once said forceRelease needs: +unlink (and +publish, already in the mutex rule).
  unlinkonly: [...mutex, '+unlink'],
  fencer: fencedWrites,
  fencertagged: without(fencedWrites, WRITE_IDS_PATTERN),
};

describe('least privilege: the ACL rules of docs/acl.md', () => {
  let server: RedisServer;
  let admin: Redis;
  const url = (user: string): string => userUrl(server.port, user, PASSWORD);

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis({ port: server.port, host: '127.0.0.1' });
    await createAclUser(admin, 'admin', PASSWORD, ['~*', '&*', '+@all']);
    await admin.call('AUTH', 'admin', PASSWORD);
    for (const [user, rule] of Object.entries(USERS)) {
      await createAclUser(admin, user, PASSWORD, rule);
    }
    // Nothing below may lean on the all-powerful default user.
    await admin.call('ACL', 'SETUSER', 'default', 'off');
  });

  afterAll(async () => {
    // The harness's last look at the keys (all with an expiry?) connects as the default user.
    await admin.call('ACL', 'SETUSER', 'default', 'on');
    admin.disconnect();
    await server.stop();
  });

  describe('the page itself', () => {
    it('gives, for every feature, the mutex rule plus each feature’s grants', () => {
      const additions = ['fencing', 'semaphores and read-write locks', 'replicas'];
      const union = new Set([...mutex, ...additions.flatMap(documentedRule)]);
      expect(new Set(everyFeature)).toEqual(union);
    });

    it('gives, for a custom prefix, the same rule with the prefix in its four patterns', () => {
      const custom = USERS.billing.map((word) => word.replace(CUSTOM_PREFIX, 'lock:'));
      expect(custom).toEqual(everyFeature);
    });

    it('grants every command the lock scripts call', () => {
      const scripts = ['acquire.scripts', 'release.scripts', 'holder-set.scripts', 'lua-helpers'];
      const texts = scripts.map((name) =>
        readFileSync(`lib/stores/redis/scripts/${name}.ts`, 'utf8'),
      );
      const called = new Set(
        texts.flatMap((text) => [...text.matchAll(/redis\.p?call\('(\w+)'/g)].map((m) => m[1])),
      );
      called.add('PUBLISH');
      const missing = [...called].filter(
        (command) => !everyFeature.includes(`+${command.toLowerCase()}`),
      );
      expect(missing).toEqual([]);
    });
  });

  describeCoreScenarios('as a user with the rule for every feature', () => ({
    redis: url('locks'),
  }));

  describeCoreScenarios('with a custom keyPrefix, as a user with its rule', () => ({
    redis: url('billing'),
    keyPrefix: CUSTOM_PREFIX,
  }));

  describeCoreScenarios(
    'as a user with the mutex rule only',
    () => ({ redis: url('mutexonly') }),
    [],
  );

  describe('replicas and Redlock', () => {
    const apps: INestApplicationContext[] = [];
    const start = async (options: LockModuleOptions): Promise<LockService> => {
      const moduleRef = await Test.createTestingModule({
        imports: [LockModule.forRoot({ ...options, logger: false })],
      }).compile();
      apps.push(await moduleRef.init());
      return moduleRef.get(LockService);
    };
    afterAll(() => Promise.all(apps.map((app) => app.close())));

    it('replicas: the startup check (WAIT) passes with the rule for every feature', async () => {
      await expect(start({ redis: url('locks'), replicas: { count: 1 } })).resolves.toBeDefined();
    });

    it('Redlock: a node with the mutex rule takes and releases locks', async () => {
      const locks = await start({ redlock: [url('mutexonly')] });
      const lock = await locks.acquire('core:redlock');
      expect(await locks.tryAcquire('core:redlock')).toBeUndefined();
      await expect(lock.release()).resolves.toBe('released');
    });
  });

  describe('inspection and fenced writes, as users made from their rules', () => {
    const apps: INestApplicationContext[] = [];
    const start = async (user: string, pollCap?: number): Promise<LockService> => {
      const moduleRef = await Test.createTestingModule({
        imports: [LockModule.forRoot({ redis: url(user), logger: false, pollCap })],
      }).compile();
      apps.push(await moduleRef.init());
      return moduleRef.get(LockService);
    };
    afterAll(() => Promise.all(apps.map((app) => app.close())));

    it('the inspection rule: inspect, list, and a forceRelease that wakes a waiter', async () => {
      const holder = await start('mutexonly');
      // No fallback poll within the test: only the forced release's notification wakes it.
      const waiter = await start('mutexonly', 60_000);
      const operator = await start('inspector');
      await holder.acquire('inspected:1', { ttl: 60_000, autoRenew: false });
      const waiting = waiter.acquire('inspected:1', { wait: 20_000 });
      await expect(operator.inspect('inspected:1')).resolves.toMatchObject({ kind: 'mutex' });
      const listed = [];
      for await (const summary of operator.list('inspected:*')) listed.push(summary.key);
      expect(listed).toEqual(['inspected:1']);
      const forcedAt = performance.now();
      await expect(operator.forceRelease('inspected:1')).resolves.toBe(true);
      const lock = await waiting;
      // Well inside the holder's 60 s lease and the waiter's 60 s poll: woken by the PUBLISH.
      expect(performance.now() - forcedAt).toBeLessThan(10_000);
      await lock.release();
    });

    it('fencedWrite: the rule with ~{account:* writes through a fence key without a hash tag', async () => {
      // The app's own data client: the rule is for fencedWrite alone, without INFO's ready check.
      const client = new Redis(url('fencer'), { enableReadyCheck: false });
      try {
        const write = (fenceKey: string, fence: number) =>
          fencedWrite(client, {
            fence,
            fenceKey,
            writes: [['HSET', 'account:7', 'balance', fence]],
          });
        await expect(write('account:7:fence', 5)).resolves.toEqual([1]);
        await expect(write('account:{7}:fence', 6)).resolves.toEqual([0]);
        expect(await admin.hget('account:7', 'balance')).toBe('6');
        // The write ids' key of an untagged fence key is the one ~{account:* is for.
        expect(await admin.exists('{account:7:fence}\x1fwrites')).toBe(1);
        expect(await admin.exists('account:{7}:fence\x1f\x1fwrites')).toBe(1);
      } finally {
        client.disconnect();
      }
    });
  });

  it('the server denied nothing to the documented users (ACL LOG is empty)', async () => {
    expect(await admin.call('ACL', 'LOG')).toEqual([]);
  });

  describe('canaries: a rule with one grant taken away', () => {
    const apps: INestApplicationContext[] = [];
    const start = async (user: string, logger = new CapturingLogger()) => {
      const moduleRef = await Test.createTestingModule({
        imports: [TerminusModule, LockModule.forRoot({ redis: url(user), logger })],
        providers: [LockHealthIndicator],
      }).compile();
      apps.push(await moduleRef.init());
      return { locks: moduleRef.get(LockService), health: moduleRef.get(LockHealthIndicator) };
    };
    afterAll(() => Promise.all(apps.map((app) => app.close())));

    it('without +time, fencing is refused, naming TIME; logged once; health is degraded', async () => {
      const logger = new CapturingLogger();
      const { locks, health } = await start('notime', logger);
      const errors = [];
      for (let i = 0; i < 3; i++)
        errors.push(await errorOf(() => locks.acquire('f', { fencing: true })));
      for (const error of errors) {
        expect(error).toBeInstanceOf(LockStoreRefusedError);
        expect(error).toMatchObject({
          code: 'LOCK_STORE_REFUSED',
          refusal: 'permission',
          refused: 'time',
        });
        expect((error as Error).message).toContain('grant +time');
        expect((error as Error).message).toContain("redis.call('TIME')");
      }
      expect(lockErrorBody(errors[0] as LockStoreRefusedError)).toEqual({
        statusCode: 503,
        error: 'LOCK_STORE_REFUSED',
        message: 'Resource "f" cannot be locked: the lock service is misconfigured.',
        resource: 'f',
      });
      const lines = logger.at('warn');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        level: 'error',
        text: expect.stringContaining('grant +time'),
      });
      // A plain mutex needs no TIME: it still works, and health does not take the app out of
      // rotation for a permission only fencing needs (terminus 12 says `degraded`).
      await (await locks.acquire('m')).release();
      const report = await health.isHealthy('locks');
      expect(report.locks).toEqual({
        status: 'degraded',
        rtt: expect.any(Number),
        evictionPolicy: 'noeviction',
        warning: expect.stringContaining('grant +time'),
        refused: ['permission: time'],
      });
      // Strict: any refusal, a feature's included, is down.
      const strict = await health.isHealthy('locks', { strict: true });
      expect(strict.locks).toMatchObject({
        status: 'down',
        message: expect.stringContaining('grant +time'),
        refused: ['permission: time'],
      });
    });

    it('without +set, a mutex is refused, and health is down: the core path fails', async () => {
      const { locks, health } = await start('noset');
      const error = await errorOf(() => locks.acquire('core:m'));
      expect(error).toMatchObject({ refusal: 'permission', refused: 'set' });
      const report = await health.isHealthy('locks');
      expect(report.locks).toMatchObject({
        status: 'down',
        message: expect.stringContaining('grant +set'),
        refused: ['permission: set'],
      });
    });

    it('inspection without its grants is refused, naming the command to grant', async () => {
      const { locks } = await start('mutexonly');
      const listing = await errorOf(async () => {
        for await (const summary of locks.list()) void summary;
      });
      expect(listing).toBeInstanceOf(LockStoreRefusedError);
      expect(listing).toMatchObject({ refusal: 'permission', refused: 'scan' });
      expect((listing as Error).message).toContain('grant +scan');
      const inspecting = await errorOf(() => locks.inspect('core:inspected'));
      expect(inspecting).toBeInstanceOf(LockStoreRefusedError);
      expect((inspecting as Error).message).toMatch(/grant \+(type|mget)/);
    });

    it('forceRelease with +unlink alone is refused, naming TYPE, and leaves the lock', async () => {
      const { locks } = await start('unlinkonly');
      await locks.acquire('forced:1', { ttl: 60_000, autoRenew: false });
      const error = await errorOf(() => locks.forceRelease('forced:1'));
      expect(error).toBeInstanceOf(LockStoreRefusedError);
      expect(error).toMatchObject({ refusal: 'permission', refused: 'type' });
      expect((error as Error).message).toContain('grant +type');
      expect(await admin.exists('lock:forced:1')).toBe(1);
    });

    it('fencedWrite without ~{account:*: a tagged fence key still works, an untagged one is refused', async () => {
      const client = new Redis(url('fencertagged'), { enableReadyCheck: false });
      try {
        const write = (fenceKey: string) =>
          fencedWrite(client, { fence: 9, fenceKey, writes: [['HSET', 'account:8', 'b', 1]] });
        await expect(write('account:{8}:fence')).resolves.toEqual([1]);
        await expect(write('account:8:fence')).rejects.toThrow(/NOPERM|ACL failure|can't/);
      } finally {
        client.disconnect();
      }
    });

    it('without &lock:*, a waiter on a hash-tagged key is refused, naming the channel', async () => {
      const holder = await start('notagchannel');
      const waiter = await start('notagchannel');
      const lock = await holder.locks.acquire('{stock}:9');
      const error = await errorOf(() => waiter.locks.acquire('{stock}:9', { wait: 2_000 }));
      await lock.release();
      expect(error).toBeInstanceOf(LockStoreRefusedError);
      expect(error).toMatchObject({ refusal: 'permission', refused: 'channel' });
      expect((error as Error).message).toContain('&lock:*');
      // Notifications across processes are a feature: the mutex path works, health says so.
      await (await waiter.locks.acquire('plain')).release();
      const report = await waiter.health.isHealthy('locks');
      expect(report.locks).toMatchObject({ status: 'degraded', refused: ['permission: channel'] });
    });
  });
});
