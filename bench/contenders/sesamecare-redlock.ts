import { ExecutionError, Redlock, type Settings } from '@sesamecare-oss/redlock';
import { connect, quit } from './connect.js';
import type { Contender, Tuning } from './contender.js';

/**
 * @sesamecare-oss/redlock 1.4, the maintained fork of node-redlock (ioredis only), on a single
 * client: the same retry settings as the redlock contender. `defaults`: retryCount 10,
 * retryDelay 200 ± 100 ms. `hot-key`: retry for ever every 10 ± 5 ms. Its scripts SELECT the
 * configured db (`redis.pcall`) before their work, inside the same EVALSHA.
 */
const HOT_KEY: Settings = { retryCount: -1, retryDelay: 10, retryJitter: 5 };

export async function createSesamecareRedlock(url: string, tuning: Tuning): Promise<Contender> {
  const client = await connect(url);
  const redlock = new Redlock([client], tuning === 'hot-key' ? HOT_KEY : {});
  // Each refused attempt is emitted as an 'error' for observability, as its README says to
  // listen for: without a listener, EventEmitter would throw it.
  redlock.on('error', () => undefined);
  return {
    name: '@sesamecare-oss/redlock',
    settings:
      tuning === 'hot-key'
        ? 'retryCount -1 (for ever), retryDelay 10 ms, retryJitter 5 ms'
        : 'defaults: retryCount 10, retryDelay 200 ms, retryJitter 100 ms',
    // No abort and no wait: its retry settings decide how long it tries.
    async acquire(key, { ttl }) {
      try {
        const lock = await redlock.acquire([key], ttl);
        return { release: async () => void (await lock.release()) };
      } catch (error) {
        if (error instanceof ExecutionError) return undefined;
        throw error;
      }
    },
    close: () => quit(client),
  };
}
