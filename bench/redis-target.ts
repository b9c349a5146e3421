import { Redis } from 'ioredis';
import { ensureRedisInstalled, launchRedis } from '../tools/redis-launcher.js';
import { killOnExit, onCleanup } from './cleanup.js';

/** The one Redis server every contender of a run shares. */
export interface RedisTarget {
  readonly url: string;
  /** True when the bench started it (and stops it); false for `REDIS_URL`. */
  readonly launched: boolean;
  readonly version: string;
  /** The server's process, when the bench started it. */
  readonly pid?: number;
  /** For the bench's own probes (INFO, FLUSHALL, PING); never used by a contender. */
  readonly admin: Redis;
  close(): Promise<void>;
}

export async function openRedisTarget(log: (line: string) => void): Promise<RedisTarget> {
  const given = process.env.REDIS_URL;
  let stop = async (): Promise<void> => undefined;
  let url = given;
  if (!url) {
    ensureRedisInstalled(log);
    const redis = await launchRedis();
    url = redis.url;
    stop = redis.stop;
    onCleanup(stop);
  }
  const admin = new Redis(url);
  const server = await admin.info('server');
  const version = /redis_version:(\S+)/.exec(server)?.[1] ?? 'unknown';
  const pid = Number(/process_id:(\d+)/.exec(server)?.[1]);
  if (!given && pid) killOnExit(pid);
  return {
    url,
    launched: !given,
    version,
    pid: !given && pid ? pid : undefined,
    admin,
    close: async () => {
      await admin.quit();
      await stop();
    },
  };
}

/**
 * Median PING round trip, ms: back to back (`hot`, the RTT of the theoretical max), and after
 * 1 ms of idleness (`afterIdle`), which is what a hand-off after a 1 ms section really pays:
 * on a busy VM, waking a sleeping process costs more than the trip itself. `ping` sends one
 * PING through the client whose round trip counts (the admin connection, or the cell's client).
 */
export async function measureRtt(
  ping: () => Promise<unknown>,
): Promise<{ hot: number; afterIdle: number }> {
  const hot = await pingMedian(ping, 300, 0);
  const afterIdle = await pingMedian(ping, 40, 1);
  return { hot, afterIdle };
}

async function pingMedian(
  ping: () => Promise<unknown>,
  count: number,
  idleMs: number,
): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
    const start = performance.now();
    await ping();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1];
}
