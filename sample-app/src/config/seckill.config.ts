/** The sample app's settings, from the environment. */
export interface SeckillConfig {
  readonly port: number;
  readonly redisUrl: string;
  /** How long a buyer waits for the product's lock before answering BUSY. */
  readonly lockWaitMs: number;
  /** Lease of the product lock; renewed while the purchase runs. */
  readonly lockTtlMs: number;
  /** Turn fenced stock writes off to see what they protect against (tests only). */
  readonly fencing: boolean;
  /** Simulated slow work inside the critical section, between reading and writing (tests only). */
  readonly thinkMs: number;
}

export const SECKILL_CONFIG = Symbol('SECKILL_CONFIG');

export function loadSeckillConfig(env: NodeJS.ProcessEnv = process.env): SeckillConfig {
  return {
    port: integer(env.PORT, 3000, 'PORT'),
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    lockWaitMs: integer(env.LOCK_WAIT_MS, 5_000, 'LOCK_WAIT_MS'),
    lockTtlMs: integer(env.LOCK_TTL_MS, 5_000, 'LOCK_TTL_MS'),
    fencing: env.SECKILL_FENCING !== 'off',
    thinkMs: integer(env.SECKILL_THINK_MS, 0, 'SECKILL_THINK_MS'),
  };
}

function integer(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a whole number ≥ 0, got "${raw}"`);
  return value;
}
