/**
 * redlock v5's typings (dist/index.d.ts) are not reachable through its package.json "exports"
 * under NodeNext resolution, so this declares the part the bench uses.
 */
declare module 'redlock' {
  import type { Cluster, Redis } from 'ioredis';

  export interface Settings {
    readonly driftFactor: number;
    readonly retryCount: number;
    readonly retryDelay: number;
    readonly retryJitter: number;
    readonly automaticExtensionThreshold: number;
  }

  export class ExecutionError extends Error {}

  export class Lock {
    readonly value: string;
    release(): Promise<unknown>;
  }

  export interface RedlockAbortSignal extends AbortSignal {
    error?: Error;
  }

  export default class Redlock {
    constructor(clients: Iterable<Redis | Cluster>, settings?: Partial<Settings>);
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>;
    using<T>(
      resources: string[],
      duration: number,
      routine: (signal: RedlockAbortSignal) => Promise<T>,
    ): Promise<T>;
  }
}
