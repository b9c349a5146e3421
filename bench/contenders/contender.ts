/** What every lock under test offers the scenarios: take a key, hand back something to release. */
export interface HeldLock {
  release(): Promise<void>;
}

export interface AcquireOptions {
  /** Lease, ms. */
  readonly ttl: number;
  /** Longest wait for a busy key, ms (redlock ignores it: its retry settings decide). */
  readonly wait: number;
  /** Aborted when a timed cell ends, so waiters stop. */
  readonly signal?: AbortSignal;
}

export interface Contender {
  readonly name: string;
  /** One line on the settings used, for the report. */
  readonly settings: string;
  /** `undefined` when the key stayed busy for the whole wait or the signal aborted. */
  acquire(key: string, options: AcquireOptions): Promise<HeldLock | undefined>;
  close(): Promise<void>;
}

/**
 * `defaults`: each library's default settings (uncontended, flash sale).
 * `hot-key`: retry settings under which a poller eventually gets a contended key.
 */
export type Tuning = 'defaults' | 'hot-key';

/** The Redis client libraries the locks run on (issue 43). */
export const BENCH_CLIENTS = ['ioredis', 'node-redis', 'glide'] as const;
export type BenchClient = (typeof BENCH_CLIENTS)[number];

export const LOCK_CONTENDERS = [
  'library',
  'redlock',
  '@sesamecare-oss/redlock',
  'redis-semaphore',
  'redlock-universal',
  'raw',
] as const;
export type LockContenderName = (typeof LOCK_CONTENDERS)[number];

/** The locks of issue 6, which scenario 3's worker processes run (on ioredis). */
export const FIRST_LOCK_CONTENDERS: readonly LockContenderName[] = [
  'library',
  'redlock',
  'redis-semaphore',
  'raw',
];

/**
 * The clients each lock takes: node-redlock, its fork and redis-semaphore are written for
 * ioredis alone; redlock-universal has an adapter for each of the three, as this library does.
 */
export const CLIENTS_OF: Readonly<Record<LockContenderName, readonly BenchClient[]>> = {
  library: BENCH_CLIENTS,
  redlock: ['ioredis'],
  '@sesamecare-oss/redlock': ['ioredis'],
  'redis-semaphore': ['ioredis'],
  'redlock-universal': BENCH_CLIENTS,
  raw: BENCH_CLIENTS,
};
