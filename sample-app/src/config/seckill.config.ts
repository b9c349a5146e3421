/** Where the locks live. The product data always lives in `REDIS_URL` (or the cluster). */
export type LockBackend = 'redis' | 'cluster' | 'redlock';

/** The sample app's settings, from the environment. */
export interface SeckillConfig {
  readonly port: number;
  /** `LOCK_BACKEND`: `redis` (default), `cluster` or `redlock`. */
  readonly backend: LockBackend;
  /** `REDIS_URL`: the Redis for data and (with the `redis` backend) locks. */
  readonly redisUrl: string;
  /** `REDIS_CLUSTER_NODES`: `host:port,host:port` seed nodes, for the `cluster` backend. */
  readonly clusterNodes: readonly { host: string; port: number }[];
  /** `REDLOCK_URLS`: comma-separated independent masters, for the `redlock` backend. */
  readonly redlockUrls: readonly string[];
  /** How long a buyer waits for the product's lock before answering BUSY. */
  readonly lockWaitMs: number;
  /** Lease of the product lock; renewed while the purchase runs. */
  readonly lockTtlMs: number;
  /** Fenced stock writes (off with `SECKILL_FENCING=off`, and on Redlock, which has no fences). */
  readonly fencing: boolean;
  /** Simulated slow work inside the critical section, between reading and writing (tests only). */
  readonly thinkMs: number;
}

export const SECKILL_CONFIG = Symbol('SECKILL_CONFIG');

export function loadSeckillConfig(env: NodeJS.ProcessEnv = process.env): SeckillConfig {
  const backend = (env.LOCK_BACKEND ?? 'redis') as LockBackend;
  if (!['redis', 'cluster', 'redlock'].includes(backend)) {
    throw new Error(`LOCK_BACKEND must be redis, cluster or redlock, got "${backend}"`);
  }
  return {
    port: integer(env.PORT, 3000, 'PORT'),
    backend,
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    clusterNodes: list(env.REDIS_CLUSTER_NODES).map((node) => {
      const [host, port] = node.split(':');
      return { host, port: integer(port, 6379, 'REDIS_CLUSTER_NODES port') };
    }),
    redlockUrls: list(env.REDLOCK_URLS),
    lockWaitMs: integer(env.LOCK_WAIT_MS, 5_000, 'LOCK_WAIT_MS'),
    lockTtlMs: integer(env.LOCK_TTL_MS, 5_000, 'LOCK_TTL_MS'),
    fencing: env.SECKILL_FENCING !== 'off' && backend !== 'redlock',
    thinkMs: integer(env.SECKILL_THINK_MS, 0, 'SECKILL_THINK_MS'),
  };
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function integer(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name} must be a whole number ≥ 0, got "${raw}"`);
  return value;
}
