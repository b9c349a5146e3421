import { readFileSync } from 'node:fs';
import type { INestApplicationContext } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockHealthIndicator } from '../../lib/health/index.js';
import {
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

    it('without +time, fencing is refused, naming TIME; logged once; health is down', async () => {
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
      // A plain mutex needs no TIME: it still works, and the store is not reported unreachable.
      await (await locks.acquire('m')).release();
      const report = await health.isHealthy('locks');
      expect(report.locks).toMatchObject({
        status: 'down',
        message: expect.stringContaining('grant +time'),
        refused: ['permission: time'],
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

    it('without &lock:*, a waiter on a hash-tagged key is refused, naming the channel', async () => {
      const holder = await start('notagchannel');
      const waiter = await start('notagchannel');
      const lock = await holder.locks.acquire('{stock}:9');
      const error = await errorOf(() => waiter.locks.acquire('{stock}:9', { wait: 2_000 }));
      await lock.release();
      expect(error).toBeInstanceOf(LockStoreRefusedError);
      expect(error).toMatchObject({ refusal: 'permission', refused: 'channel' });
      expect((error as Error).message).toContain('&lock:*');
    });
  });
});
