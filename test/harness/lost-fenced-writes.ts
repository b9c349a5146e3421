import { Redis } from 'ioredis';
import { fencedWrite } from '../../lib/stores/redis/fenced-write.js';
import {
  failUnansweredOnClose,
  OWNED_CLIENT_OPTIONS,
} from '../../lib/stores/redis/ioredis/owned-client.js';
import type { TcpDelayProxy } from './tcp-delay-proxy.js';

/** Writes in flight together when their connection drops. */
const IN_FLIGHT = 3;
const FENCE_KEY = 'stock:fence';
const COUNTER = 'stock:count';

/**
 * What a fenced write without write ids looks like: check the fence, record it, INCRBY.
 * KEYS: fence key, counter; ARGV: fence, amount.
 */
export const INCR_IF_FENCE_OK = `
if tonumber(ARGV[1]) < tonumber(redis.call('GET', KEYS[1]) or '0') then return -1 end
redis.call('SET', KEYS[1], ARGV[1])
return redis.call('INCRBY', KEYS[2], ARGV[2])`;

/** A client like the module's own: it never resends, and fails what a dropped link left. */
export function nonResending(port: number, owned: Redis[]): Redis {
  const client = new Redis({ port, ...OWNED_CLIENT_OPTIONS });
  failUnansweredOnClose(client);
  client.on('error', () => undefined);
  owned.push(client);
  return client;
}

export interface FencedRounds {
  /** Distinct write ids sent: what the counter must read. */
  readonly applied: number;
  readonly counter: number;
  readonly outcomes: { firstCallFailed: number; mismatchedRetries: number };
}

/**
 * Each round, for each writer: `IN_FLIGHT` fenced INCRBYs, each with its own id, go out
 * together and the connection drops at the first one's reply. Then the caller retries every
 * write with the same id, as an app retrying an order would; a retry must return the result
 * the first call had (when it had one) and apply nothing.
 */
export async function fencedRounds(
  proxy: TcpDelayProxy,
  writers: Record<string, Redis>,
  fence: number,
  rounds: number,
): Promise<FencedRounds> {
  const outcomes = { firstCallFailed: 0, mismatchedRetries: 0 };
  const write = (client: Redis, id: string): Promise<unknown[]> =>
    fencedWrite(client, { fence, fenceKey: FENCE_KEY, writes: [['INCRBY', COUNTER, 1]], id });
  // The script loaded, so that the lost reply is the write's, not a NOSCRIPT.
  const first = Object.values(writers)[0];
  await write(first, 'warm-up');
  let applied = 1;
  for (let round = 0; round < rounds; round++) {
    for (const [name, client] of Object.entries(writers)) {
      await client.ping();
      const ids = Array.from({ length: IN_FLIGHT }, (_, i) => `${name}:${round}:${i}`);
      proxy.loseReplyTo(ids[0]);
      const firsts = await Promise.all(ids.map((id) => write(client, id).catch(() => undefined)));
      for (const [i, id] of ids.entries()) {
        const retried = await write(client, id);
        if (firsts[i] === undefined) outcomes.firstCallFailed++;
        else if (JSON.stringify(retried) !== JSON.stringify(firsts[i]))
          outcomes.mismatchedRetries++;
      }
      applied += IN_FLIGHT;
    }
  }
  const counter = Number(await first.get(COUNTER));
  return { applied, counter, outcomes };
}
