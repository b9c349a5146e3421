import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ensureRedisInstalled,
  freePort,
  spawnRedisServer,
  stopChild,
} from '../../../tools/redis-launcher.js';
import { compiledMain, startInstances, type AppInstance } from '../app-instances.js';

/** The processes `seckill:live` starts, and what its controls do to them. */
export interface LiveStack {
  readonly redisUrl: string;
  readonly instances: readonly NamedInstance[];
  /** The PIDs of every process started and still running: Redis first, then the instances. */
  pids(): number[];
  redisPid(): number;
  /** Stops Redis and starts a new one on the same port; resolves with how long it was down. */
  restartRedis(): Promise<number>;
  /** SIGSTOP, then SIGCONT `ms` later. */
  pause(instance: NamedInstance, ms: number): Promise<void>;
  stop(): Promise<void>;
}

export interface NamedInstance extends AppInstance {
  readonly name: string;
  paused: boolean;
}

export interface StackSettings {
  readonly instances: number;
  /** The product lock's lease: shorter than a pause, so that a paused holder loses it. */
  readonly lockTtlMs: number;
  readonly thinkMs: number;
  readonly log: (line: string) => void;
}

/** Redis on a free loopback port, then the instances on it; nothing left running on failure. */
export async function startLiveStack(settings: StackSettings): Promise<LiveStack> {
  ensureRedisInstalled(settings.log);
  const port = await freePort();
  // Every process started here dies with the launcher, even of kill -9 (where Linux allows).
  const launch = { diesWithParent: true };
  let redis: ChildProcess = await spawnRedisServer(port, [], launch);
  const redisUrl = `redis://127.0.0.1:${port}`;
  let instances: NamedInstance[];
  try {
    const env = {
      LOCK_BACKEND: 'redis',
      REDIS_URL: redisUrl,
      LOCK_WAIT_MS: '10000',
      LOCK_TTL_MS: String(settings.lockTtlMs),
      SECKILL_THINK_MS: String(settings.thinkMs),
    };
    const started = await startInstances(settings.instances, env, compiledMain, launch);
    instances = started.map((instance, i) =>
      Object.assign(instance, { name: String.fromCharCode(65 + i), paused: false }),
    );
  } catch (error) {
    await stopChild(redis);
    throw error;
  }
  return {
    redisUrl,
    instances,
    pids: () =>
      [redis, ...instances.map((i) => i.process)]
        .filter((child) => child.exitCode === null && child.signalCode === null)
        .map((child) => child.pid!),
    redisPid: () => redis.pid!,
    async restartRedis() {
      const stoppedAt = performance.now();
      await stopChild(redis);
      redis = await spawnRedisServer(port, [], launch);
      return performance.now() - stoppedAt;
    },
    async pause(instance, ms) {
      instance.paused = true;
      instance.process.kill('SIGSTOP');
      try {
        await sleep(ms);
      } finally {
        instance.process.kill('SIGCONT');
        instance.paused = false;
      }
    },
    async stop() {
      await Promise.all(instances.map((instance) => stopChild(instance.process)));
      await stopChild(redis);
    },
  };
}
