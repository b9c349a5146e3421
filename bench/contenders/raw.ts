import { createHash, randomUUID } from 'node:crypto';
import { sleep } from '../stats.js';
import { openConnection, type BenchConnection } from './client-connections.js';
import type { BenchClient, Contender } from './contender.js';

/** Raw's compare-and-delete: the release script of the Redis docs' lock. */
export const RELEASE =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
export const RELEASE_SHA = createHash('sha1').update(RELEASE).digest('hex');
/** A contended raw acquire retries this often: the naive spin most hand-written locks use. */
const POLL_MS = 1;

/** Raw's two commands on one client, each library's fastest way to send them. */
interface RawCommands {
  /** How they are sent, for the settings line. */
  readonly api: string;
  /** SET key token NX PX ttl: true when it was set. */
  take(key: string, token: string, ttl: number): Promise<boolean>;
  /** The compare-and-delete script by its SHA. */
  give(key: string, token: string): Promise<unknown>;
}

/**
 * The floor of any Redis lock: SET NX PX to take, a compare-and-delete script to give back,
 * on one connection of `client`. No queue, no notification, no renewal.
 */
export async function createRaw(url: string, client: BenchClient = 'ioredis'): Promise<Contender> {
  const connection = await openConnection(client, url);
  const commands = await rawCommands(connection);
  return {
    name: 'raw',
    settings: `${client} (${commands.api}): randomUUID token; SET NX PX + compare-and-delete EVALSHA; a busy key is retried every ${POLL_MS} ms`,
    async acquire(key, { ttl, wait, signal }) {
      // randomUUID draws from a pooled buffer; randomBytes(16) costs a getpid and an OpenSSL call
      // per lock, which on this machine slowed raw by ~7% at C = 1.
      const token = randomUUID();
      const deadline = performance.now() + wait;
      while (true) {
        if (await commands.take(key, token, ttl)) {
          return { release: async () => void (await commands.give(key, token)) };
        }
        if (signal?.aborted || performance.now() + POLL_MS >= deadline) return undefined;
        await sleep(POLL_MS);
      }
    },
    close: () => connection.close(),
  };
}

async function rawCommands(connection: BenchConnection): Promise<RawCommands> {
  switch (connection.kind) {
    case 'ioredis': {
      const { client } = connection;
      await client.script('LOAD', RELEASE);
      return {
        api: 'set, evalsha',
        take: async (key, token, ttl) => (await client.set(key, token, 'PX', ttl, 'NX')) === 'OK',
        give: (key, token) => client.evalsha(RELEASE_SHA, 1, key, token),
      };
    }
    case 'node-redis': {
      // Its documented sendCommand, not the typed set()/evalSha(): those build a command parser
      // and transform the reply on every call, a cost the floor should not carry (the library's
      // adapter sends through sendCommand too).
      const { client } = connection;
      await client.scriptLoad(RELEASE);
      return {
        api: 'sendCommand',
        take: async (key, token, ttl) =>
          ((await client.sendCommand(['SET', key, token, 'PX', String(ttl), 'NX'])) as unknown) ===
          'OK',
        give: (key, token) => client.sendCommand(['EVALSHA', RELEASE_SHA, '1', key, token]),
      };
    }
    case 'glide': {
      // Its typed set() (which its core encodes itself) and the script by customCommand, the
      // faster of GLIDE's ways here; invokeScript keeps a Script object in the core.
      const { client } = connection;
      const { TimeUnit } = await import('@valkey/valkey-glide');
      await client.customCommand(['SCRIPT', 'LOAD', RELEASE]);
      const expiry = (ttl: number) => ({ type: TimeUnit.Milliseconds, count: ttl });
      return {
        api: 'set, customCommand EVALSHA',
        take: async (key, token, ttl) =>
          (await client.set(key, token, {
            conditionalSet: 'onlyIfDoesNotExist',
            expiry: expiry(ttl),
          })) === 'OK',
        give: (key, token) => client.customCommand(['EVALSHA', RELEASE_SHA, '1', key, token]),
      };
    }
  }
}
