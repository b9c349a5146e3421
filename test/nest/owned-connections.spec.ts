import { jest } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import {
  LOCK_REDIS_CLIENT,
  LockModule,
  LockService,
  type LockModuleOptions,
  type LockRedisClient,
} from '../../lib/index.js';
import { channelOf } from '../../lib/stores/redis/redis-commands.js';
import { createAclUser, userUrl } from '../harness/acl-rules.js';
import { CapturingLogger } from '../harness/capturing-logger.js';
import { reportFigures } from '../harness/figures.js';
import { freePort } from '../harness/redis-server.js';
import { useRedisServer } from '../harness/use-redis.js';
import { outcome, waitUntil } from '../harness/waits.js';

/** The password every fuzzed URL carries: letters and digits, the same once percent-encoded. */
const MARKER = 'Mk7pw0rdZq';
// A failure names its seed; URL_FUZZ_SEED=<seed> replays the same URLs.
const SEED = Number(process.env.URL_FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = 30;

/** Everything an operator or a caller could read: each line logged or printed, each error. */
class Transcript {
  readonly texts: string[] = [];
  readonly logger = new CapturingLogger();

  error(error: unknown, depth = 0): void {
    if (depth > 5 || error === undefined || error === null) return;
    const { message, stack, cause } = error as Error;
    this.texts.push(String(error), String(message), String(stack), JSON.stringify(error) ?? '');
    this.error(cause, depth + 1);
  }

  all(): string[] {
    return [...this.texts, ...this.logger.lines.map(({ text }) => text)];
  }
}

/** Boots the module on `options`, makes one call if it started, and records all it said. */
async function bootAndCall(
  options: LockModuleOptions,
  transcript: Transcript,
): Promise<INestApplicationContext | undefined> {
  try {
    const moduleRef = await Test.createTestingModule({ imports: [LockModule.forRoot(options)] })
      .setLogger(transcript.logger)
      .compile();
    const app = await moduleRef.init();
    const { value, error } = await outcome(app.get(LockService).tryAcquire('fuzz'));
    transcript.error(error);
    await value?.release();
    return app;
  } catch (error) {
    transcript.error(error);
    return undefined;
  }
}

describe("the module's own connections", () => {
  const apps: INestApplicationContext[] = [];
  // Apps closed while their Redis is still up, which `beforeStop` is for.
  const redis = useRedisServer({
    beforeStop: () => Promise.all(apps.splice(0).map((app) => app.close())),
  });
  let consoleLines: string[];

  beforeAll(() => {
    // ioredis prints to the console; a module's client must not, and nothing printed may leak.
    for (const method of ['warn', 'error', 'log'] as const) {
      jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        consoleLines.push(args.map(String).join(' '));
      });
    }
  });

  beforeEach(() => (consoleLines = []));

  afterAll(() => jest.restoreAllMocks());

  describe('a URL in the options never shows its password', () => {
    let closedPort: number;

    beforeAll(async () => {
      closedPort = await freePort();
      await createAclUser(redis.probe, 'fuzz', MARKER, ['~*', '&*', '+@all']);
    });

    const part = <T>(...values: T[]): fc.Arbitrary<T> => fc.constantFrom(...values);

    /** Well-formed URLs with MARKER as the password, to the live Redis or the closed port. */
    function validUrls(): fc.Arbitrary<string> {
      return fc
        .tuple(
          part('redis://', 'rediss://', 'REDIS://'),
          part(`fuzz:${MARKER}@`, `:${MARKER}@`, ''),
          part(redis.server.port, closedPort),
          part('', '/0', `?password=${MARKER}`),
        )
        .map(([scheme, auth, port, tail]) => `${scheme}${auth}127.0.0.1:${port}${tail}`);
    }

    /** URLs carrying MARKER mistyped in the usual ways, and then a character or two more. */
    function mistypedUrls(): fc.Arbitrary<string> {
      const url = fc
        .tuple(
          part('redis:', 'rediss:', 'redis-sentinel:', 'REDIS:', 'unix:', 'http:', ''),
          part('//', '/', '', '///'),
          part('fuzz', '', 'default'),
          part(`:${MARKER}`, `:${MARKER}:x`, `:${MARKER}#`, `:${MARKER}/`, `:${MARKER}?`),
          part('@', '@@', ''),
          part('127.0.0.1', '', 'localhost', '[::1]'),
          part(`:${redis.server.port}`, `:${closedPort}`, '', ':port', ':99999'),
          part('', '/0', '/x', `/${MARKER}`, '?db=1', `?password=${MARKER}`, '#f', ' ', '\n'),
        )
        .map((parts) => parts.join(''));
      const typo = fc.tuple(fc.nat(), part(':', '/', '@', '?', '#', '%', ' ', '['));
      return fc.tuple(url, fc.array(typo, { maxLength: 2 })).map(([text, typos]) =>
        typos.reduce((s, [at, c]) => {
          const i = at % (s.length + 1);
          return s.slice(0, i) + c + s.slice(i);
        }, text),
      );
    }

    const where = fc.constantFrom('redis', 'redlock', 'cluster');

    it(`boots on each, to a live Redis and a closed port, and says it nowhere (seed ${SEED})`, async () => {
      let booted = 0;
      await fc.assert(
        fc.asyncProperty(fc.oneof(validUrls(), mistypedUrls()), where, async (url, option) => {
          const transcript = new Transcript();
          consoleLines = [];
          const target: Partial<LockModuleOptions> =
            option === 'redis'
              ? { redis: url }
              : option === 'redlock'
                ? { redlock: [url] }
                : { redis: { cluster: [url] } };
          const app = await bootAndCall(
            { ...target, storeTimeout: 300, logger: transcript.logger },
            transcript,
          );
          await app?.close();
          booted += app ? 1 : 0;
          const leaks = [...transcript.all(), ...consoleLines].filter((text) =>
            text.includes(MARKER),
          );
          expect(leaks).toEqual([]);
        }),
        { seed: SEED, numRuns: RUNS },
      );
      reportFigures('URL fuzz', { seed: SEED, runs: RUNS, booted });
    });

    it('refuses the one-slash URL at bootstrap, naming the option', async () => {
      const transcript = new Transcript();
      const url = `redis:/:${MARKER}@127.0.0.1:${redis.server.port}`;

      expect(
        await bootAndCall({ redis: url, logger: transcript.logger }, transcript),
      ).toBeUndefined();
      expect(transcript.texts[0]).toMatch(
        /LockOptionsError: LockModule "redis" is not a Redis URL/,
      );
      expect(transcript.all().filter((text) => text.includes(MARKER))).toEqual([]);
    });
  });

  describe("ioredis's warnings", () => {
    let url: string;

    beforeAll(async () => {
      await createAclUser(redis.probe, 'noinfo', 'noinfo-pw', ['~*', '&*', '+@all', '-info']);
      url = userUrl(redis.server.port, 'noinfo', 'noinfo-pw');
    });

    it("canary: a user's client with INFO refused warns on the console", async () => {
      const client = new Redis(url);
      await client.ping();
      client.disconnect();

      expect(consoleLines).toEqual([expect.stringMatching(/Skipping the ready check/)]);
    });

    it("go to the module's logger, once, for its clients (the subscriber runs no ready check)", async () => {
      const transcript = new Transcript();
      const app = await bootAndCall({ redis: url, logger: transcript.logger }, transcript);
      apps.push(app!);
      const locks = app!.get(LockService);
      // A waiter opens the store's second connection, for release notifications.
      await redis.probe.set('lock:warned', 'someone else', 'PX', 800);
      const waiting = locks.acquire('warned', { wait: 3_000 });
      const channel = channelOf('lock:warned');
      await waitUntil('the waiter to subscribe', async () => {
        const [, subscribers] = (await redis.probe.pubsub('NUMSUB', channel)) as [string, number];
        return subscribers > 0;
      });
      await (await waiting).release();

      expect(consoleLines).toEqual([]);
      expect(transcript.logger.at('warn').map(({ text }) => text)).toEqual([
        expect.stringMatching(/^Redis refuses INFO to the lock store's connection \(NOPERM/),
      ]);
    });
  });

  describe("ioredis's warning of a password the server does not need", () => {
    // The test server's default user has no password. RESP2 sends AUTH with the password alone,
    // which such a server refuses (ioredis 6 defaults to HELLO 3 as `default`, which it takes).
    const options = () => ({
      host: '127.0.0.1',
      port: redis.server.port,
      password: 'not-needed',
      protocol: 2 as const,
    });

    it("canary: a user's client with a password the server does not need warns on the console", async () => {
      const client = new Redis(options());
      await client.ping();
      client.disconnect();

      expect(consoleLines).toEqual([expect.stringMatching(/a password was supplied/)]);
    });

    it("goes to the module's logger, once for both its connections, and the locks work", async () => {
      const transcript = new Transcript();
      const app = await bootAndCall({ redis: options(), logger: transcript.logger }, transcript);
      apps.push(app!);
      // A waiter opens the store's second connection, which authenticates too.
      await redis.probe.set('lock:unneeded', 'someone else', 'PX', 300);
      await (await app!.get(LockService).acquire('unneeded', { wait: 3_000 })).release();

      expect(consoleLines).toEqual([]);
      expect(transcript.texts).toEqual([]);
      expect(transcript.logger.at('warn').map(({ text }) => text)).toEqual([
        expect.stringMatching(/^Redis needs no password, but the lock store's connection has one/),
      ]);
    });
  });

  describe('closing while a connection keeps failing', () => {
    /** A TLS URL to a plain server: every handshake fails, and the client retries for ever. */
    const failingUrl = (): string => `rediss://127.0.0.1:${redis.server.port}`;
    const within = <T>(ms: number, work: Promise<T>): Promise<T | 'late'> => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, ms, 'late')));
      return Promise.race([work, late]).finally(() => clearTimeout(timer));
    };
    const targets: Record<string, (url: string) => Partial<LockModuleOptions>> = {
      redlock: (url) => ({ redlock: [url] }),
      redis: (url) => ({ redis: url }),
      cluster: (url) => ({ redis: { cluster: [url] } }),
    };

    it.each(Object.keys(targets))(
      'app.close() ends at once with a failing %s node',
      async (name) => {
        const options = {
          ...targets[name](failingUrl()),
          storeTimeout: 300,
          logger: false,
        } as const;
        const app = await bootAndCall(options, new Transcript());

        expect(await within(2_000, app!.close())).toBeUndefined();
      },
    );

    it("canary: the failing node's own QUIT waits through its retries", async () => {
      const options = {
        ...targets.redlock(failingUrl()),
        storeTimeout: 300,
        logger: false as const,
      };
      const app = await bootAndCall(options, new Transcript());
      const [client] = [app!.get<LockRedisClient>(LOCK_REDIS_CLIENT)].flat() as Redis[];

      const quit = client!.quit().catch(() => 'failed');

      expect(await within(2_000, quit)).toBe('late');
      await app!.close();
    });
  });
});
