import { spawnSync } from 'node:child_process';
import type { INestApplicationContext } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockHealthIndicator } from '../../lib/health/index.js';
import {
  fencedWrite,
  LockLostError,
  LockModule,
  LockService,
  LockStoreRefusedError,
} from '../../lib/index.js';
import { createAclUser, documentedRule, userUrl } from '../harness/acl-rules.js';
import { CapturingLogger } from '../harness/capturing-logger.js';
import { RedisServer } from '../harness/redis-server.js';
import { errorOf, waitUntil } from '../harness/waits.js';
import { ChildWorker } from '../harness/child-workers.js';
import { keysWithoutExpiry } from '../harness/key-expiry.js';
import type { AclWaiterConfig } from '../fixtures/acl-waiter.js';

// Every Redis error inside a lock script surfaces as the refusal it is, naming the grant it
// needs: a command the ACL user lacks is never read as another owner's lock, a kind conflict,
// or a success. Each user is the documented rule for every feature with one grant taken away.
const PASSWORD = 'refusals-test-password';
const everyFeature = documentedRule('every feature');
const without = (...grants: string[]): string[] => {
  for (const grant of grants) {
    if (!everyFeature.includes(grant)) throw new Error(`the rule has no ${grant} to take away`);
  }
  return everyFeature.filter((word) => !grants.includes(word));
};

const USERS: Record<string, readonly string[]> = {
  locks: everyFeature,
  noget: without('+get'),
  nopexpire: without('+pexpire'),
  nolpos: without('+lpos'),
  noeval: without('+evalsha', '+eval'),
  noping: without('+ping'),
  // fencedWrite's keys are the resource's: granted, with all it runs but HSET.
  fencednohset: [...everyFeature, '~account:*', '~{account:*', '+hget', '+hlen'],
};

describe('refusals name the grant they need', () => {
  let server: RedisServer;
  let admin: Redis;
  const apps: INestApplicationContext[] = [];
  const url = (user: string, password = PASSWORD): string => userUrl(server.port, user, password);

  async function start(user: string, password = PASSWORD) {
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule, LockModule.forRoot({ redis: url(user, password), logger })],
      providers: [LockHealthIndicator],
    }).compile();
    apps.push(await moduleRef.init());
    const locks = moduleRef.get(LockService);
    return { locks, logger, health: moduleRef.get(LockHealthIndicator) };
  }

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis({ port: server.port, host: '127.0.0.1' });
    for (const [user, rule] of Object.entries(USERS)) {
      await createAclUser(admin, user, PASSWORD, rule);
    }
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    admin.disconnect();
    await server.stop();
  });

  afterEach(() => admin.flushall());

  describe('without +get', () => {
    it('withLock rejects with the refusal of its release, naming GET, and says the code ran', async () => {
      const { locks, logger } = await start('noget');
      const error = await errorOf(() => locks.withLock('job', () => 'done'));

      expect(error).toBeInstanceOf(LockStoreRefusedError);
      expect(error).not.toBeInstanceOf(LockLostError);
      expect(error).toMatchObject({ refusal: 'permission', refused: 'get', result: 'done' });
      expect((error as Error).message).toContain('grant +get');
      expect((error as Error).message).toContain('ran to its end');
      // The key it could not release stays for its lease, and no longer.
      expect(await admin.pttl('lock:job')).toBeGreaterThan(0);
      const lines = logger.at('warn');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'error', text: expect.stringContaining('+get') });
    });

    it("release() rejects naming GET, never answering 'stolen'", async () => {
      const { locks } = await start('noget');
      const lock = await locks.acquire('job', { ttl: 5_000 });
      const error = await errorOf(() => lock.release());
      expect(error).toMatchObject({ name: 'LockStoreRefusedError', refused: 'get' });
    });

    it('a busy key is refused naming GET, not as a key of another kind', async () => {
      const { locks } = await start('noget');
      await admin.set('lock:busy', 'someone', 'PX', 5_000);
      const error = await errorOf(() => locks.acquire('busy', { wait: 0 }));
      expect(error).toMatchObject({ name: 'LockStoreRefusedError', refused: 'get' });
      expect((error as Error).message).not.toMatch(/keyPrefix|WRONGTYPE/);
    });

    it('a held lock whose renewal is refused is not reported stolen', async () => {
      const { locks, logger } = await start('noget');
      const lock = await locks.acquire('held', { ttl: 300 });
      await new Promise((resolve) => lock.signal.addEventListener('abort', resolve));
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect((lock.signal.reason as LockLostError).reason).not.toBe('stolen');
      expect(logger.at('error')[0]?.text).toContain('grant +get');
      await lock.release().catch(() => undefined);
    });
  });

  describe('without +pexpire', () => {
    it('a semaphore is refused naming PEXPIRE, and leaves no holder set without an expiry', async () => {
      const { locks } = await start('nopexpire');
      const error = await errorOf(() => locks.acquire('pool', { limit: 2 }));
      expect(error).toMatchObject({ name: 'LockStoreRefusedError', refused: 'pexpire' });
      expect((error as Error).message).toContain('grant +pexpire');
      expect(await keysWithoutExpiry(server.port)).toEqual([]);
    });

    it('a waiter is refused naming PEXPIRE, and leaves no turn list without an expiry', async () => {
      const holder = await start('locks');
      const waiter = await start('nopexpire');
      const lock = await holder.locks.acquire('line');
      const error = await errorOf(() => waiter.locks.acquire('line', { wait: 1_000 }));
      expect(error).toMatchObject({ name: 'LockStoreRefusedError', refused: 'pexpire' });
      expect(await keysWithoutExpiry(server.port)).toEqual([]);
      await lock.release();
    });
  });

  it('without +lpos, a waiter is refused naming LPOS', async () => {
    const holder = await start('locks');
    const waiter = await start('nolpos');
    const lock = await holder.locks.acquire('line');
    const error = await errorOf(() => waiter.locks.acquire('line', { wait: 2_000 }));
    await lock.release();
    expect(error).toMatchObject({ name: 'LockStoreRefusedError', refused: 'lpos' });
    expect((error as Error).message).toContain('grant +lpos');
  });

  it('without +evalsha and +eval, withLock rejects: the code ran, its lock was not released', async () => {
    const { locks } = await start('noeval');
    const error = await errorOf(() => locks.withLock('job', () => 42));
    expect(error).toBeInstanceOf(LockStoreRefusedError);
    expect(error).toMatchObject({ refused: 'evalsha', result: 42 });
    expect(await admin.pttl('lock:job')).toBeGreaterThan(0);
  });

  it('a fencedWrite the ACL refuses is a LockStoreRefusedError naming the grant', async () => {
    const client = new Redis(url('fencednohset'));
    try {
      const error = await errorOf(() =>
        fencedWrite(client, {
          fence: 1,
          fenceKey: 'account:1:fence',
          writes: [['SET', 'account:1', '5']],
        }),
      );
      expect(error).toBeInstanceOf(LockStoreRefusedError);
      expect(error).toMatchObject({ refusal: 'permission', refused: 'hset' });
      expect((error as Error).message).toContain('grant +hset');
    } finally {
      client.disconnect();
    }
  });

  it('without +ping, the startup log says the locks work, and they do', async () => {
    const { locks, logger } = await start('noping');
    await (await locks.acquire('job')).release();
    const lines = logger.at('error');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.text).toContain('grant +ping');
    expect(lines[0]!.text).not.toContain('Such locks fail');
    expect(lines[0]!.text).toContain('locks do not use PING');
  });

  describe('SUBSCRIBE refused after the subscriber reconnected', () => {
    async function losesSubscribe(
      mode: AclWaiterConfig['mode'],
      key: string,
    ): Promise<ChildWorker> {
      const config: AclWaiterConfig = { url: url('locks'), key, mode };
      const worker = ChildWorker.spawn('acl-waiter', config);
      await worker.next('ready', 15_000);
      worker.send({ type: 'start' });
      await worker.next('subscribed', 5_000);
      await waitUntil('the subscription made', async () =>
        ((await admin.pubsub('CHANNELS')) as string[]).some((name) => name.includes(key)),
      );
      await admin.call('ACL', 'SETUSER', 'locks', '-subscribe');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      return worker;
    }
    afterEach(async () => {
      await admin.call('ACL', 'SETUSER', 'locks', '+subscribe');
      await admin.call('ACL', 'LOG', 'RESET');
    });

    it('leaves the waiter running: it polls, and gets the lock once it is free', async () => {
      await admin.set('lock:sub', 'someone', 'PX', 20_000);
      const worker = await losesSubscribe('library', 'sub');
      try {
        // The subscriber reconnected, and its resubscription was refused (ACL LOG says so).
        await waitUntil('the resubscription refused', async () =>
          JSON.stringify(await admin.call('ACL', 'LOG')).includes('subscribe'),
        );
        await admin.del('lock:sub');
        await worker.next('acquired', 5_000);
      } finally {
        worker.send({ type: 'stop' });
        await worker.stop();
      }
    });

    it("canary: ioredis's own resubscription leaves the refusal unhandled, and the process dies", async () => {
      const worker = await losesSubscribe('plain', 'canary');
      await expect(worker.next('never', 10_000)).rejects.toThrow(/exited/);
      await worker.kill();
    });
  });

  describe('credentials Redis refuses', () => {
    it('are a refusal, logged once without the password, and health tells the cause', async () => {
      const { locks, logger, health } = await start('locks', 'not-the-password');
      const errors = [
        await errorOf(() => locks.acquire('job')),
        await errorOf(() => locks.acquire('job')),
      ];
      for (const error of errors) {
        expect(error).toBeInstanceOf(LockStoreRefusedError);
        expect(error).toMatchObject({ refusal: 'authentication' });
        expect((error as Error).message).toContain('WRONGPASS');
        expect((error as Error).message).not.toContain('not-the-password');
      }
      const report = await health
        .isHealthy('locks')
        .catch((error: { response?: unknown }) => error.response);
      expect(JSON.stringify(report)).toContain('WRONGPASS');
      await waitUntil('the refusal logged', () => logger.at('error').length > 0);
      const lines = logger.at('warn');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.text).toContain('credentials');
      expect(lines[0]!.text).not.toMatch(/unreachable|stopped answering/);
      expect(logger.lines.map((line) => line.text).join('\n')).not.toContain('not-the-password');
    });

    it('make the admin CLI exit 4 (Redis answered with an error), not 3 (unreachable)', () => {
      const cli = spawnSync(
        process.execPath,
        ['dist/cli/main.js', 'list', '--redis', url('locks', 'not-the-password')],
        { encoding: 'utf8', timeout: 10_000 },
      );
      expect(cli.status).toBe(4);
      expect(cli.stderr).toContain('WRONGPASS');
      expect(cli.stderr).not.toContain('not-the-password');
    });
  });
});
