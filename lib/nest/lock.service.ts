import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type LoggerService,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { Observable } from 'rxjs';
import type { LockEngine } from '../engine/lock-engine.js';
import type { LockEvent } from '../engine/lock.events.js';
import type { Lock } from '../engine/lock.interface.js';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import type { LockOptions, WithLockOptions } from '../engine/request/lock-options.interface.js';
import { assertLockedInstancesWired } from './decorators/locked-instances.js';
import { createLockEngine } from './lock-engine.factory.js';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';
import type { InspectOptions, ListOptions } from '../engine/lock-inspections.js';
import type { LockInspection, LockSummary } from '../stores/lock-inspection.interface.js';

/** Counts returned by `LockService.stats()`, for this process only. */
export interface LockStats {
  /** Locks held through this service; a nested (reentrant) acquisition is not counted again. */
  readonly held: number;
  /**
   * Keys (or sets of keys) this process is busy with: being taken, held, or waited for. Waiters
   * for the same keys share one local queue, so this counts keys, not callers.
   */
  readonly queues: number;
}

/** Takes and releases distributed locks. Inject it anywhere `LockModule` is imported. */
@Injectable()
export class LockService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  /** @internal */
  readonly engine: LockEngine;
  private readonly logger?: LoggerService;

  constructor(
    @Inject(LOCK_MODULE_OPTIONS) options: LockModuleOptions,
    @Optional() private readonly modules?: ModulesContainer,
  ) {
    this.engine = createLockEngine(options);
    if (options.logger !== false) this.logger = options.logger ?? new Logger('LockModule');
  }

  /** Every lock state change: acquired, contended, busy, released, renewed, expired, lost, error. */
  get events$(): Observable<LockEvent> {
    return this.engine.events$;
  }

  /**
   * Takes the lock, waiting up to `options.wait` ms for it. Throws `LockBusyError` when it stays
   * busy, `LockStoreError` when Redis fails. Pass several keys to take them all or none.
   */
  acquire(key: string | readonly string[], options?: LockOptions): Promise<Lock> {
    return this.engine.acquire(key, options);
  }

  /** Takes the lock if it is free right now; resolves `undefined` if it is busy. Never waits. */
  tryAcquire(key: string | readonly string[], options?: LockOptions): Promise<Lock | undefined> {
    return this.engine.tryAcquire(key, options);
  }

  /**
   * Runs `fn` while holding the lock, renewing it as long as `fn` runs, and always releases it.
   * Inside `fn`, taking the same key again is free (reentrant) and `currentLock()` returns it.
   * Rejects with `LockLostError` if the lock was lost while `fn` ran (see `onLost`).
   */
  withLock<T>(
    key: string | readonly string[],
    fn: (lock: Lock) => T | Promise<T>,
    options?: WithLockOptions<T>,
  ): Promise<T> {
    return this.engine.withLock(key, fn, options);
  }

  /**
   * What this process holds and waits for right now, read without a Redis call: for a health
   * page, a metrics gauge, or a test that checks nothing was left behind. Once every lock is
   * released and every wait has ended, both counts are 0.
   */
  stats(): LockStats {
    const { held, queues } = this.engine.stats();
    return { held, queues };
  }

  /**
   * Who holds `key` and for how long, who waits for it, its kind, limit and last fence, read from
   * the store (Redis: two round trips, whatever the number of holders); `undefined` when it is
   * free. Each holder's owner (host, pid, `instanceId`) comes from its process's registration,
   * and is undefined once that is gone. Throws `LockOptionsError` on a store that cannot inspect
   * (Redlock), `LockStoreError` when the store fails or is slower than `storeTimeout`.
   */
  inspect(key: string, options?: InspectOptions): Promise<LockInspection | undefined> {
    return this.engine.inspections.inspect(key, options);
  }

  /**
   * The held locks whose names match `pattern` (a Redis glob over names, without the prefix),
   * page by page with `SCAN` (never `KEYS`; every master of a Cluster): use `for await`. A lock
   * held throughout is listed at least once; one taken or freed meanwhile may or may not be.
   */
  list(pattern?: string, options?: ListOptions): AsyncIterable<LockSummary> {
    return this.engine.inspections.list(pattern, options);
  }

  /**
   * Removes the lock at `key` whatever its kind and holders, and wakes its waiters as a release
   * does; logged at WARN. Every process that holds it hears of it at once (a notice on the key
   * prefix's channel), and its holders' `signal` aborts with `LockLostError` (reason
   * `'vanished'`); their code still runs until it stops, so use it only for a lock whose holder is
   * gone or stuck, and fence the writes that matter. Resolves false when the key was free.
   */
  async forceRelease(key: string): Promise<boolean> {
    const released = await this.engine.inspections.forceRelease(key);
    if (released) {
      this.logger?.warn(
        `Lock "${key}" was released by force (forceRelease): its waiters were woken, and its ` +
          "holders' signals abort as soon as their processes hear of it.",
      );
    }
    return released;
  }

  /**
   * Checks that every decorated method Nest made can reach a `LockService`, then lets the store
   * check its configuration (e.g. that WAIT is available for `replicas`).
   */
  async onModuleInit(): Promise<void> {
    if (this.modules) assertLockedInstancesWired(this.modules);
    await this.engine.init();
  }

  /**
   * Shutdown begins (before the HTTP server waits for its requests): no new locks, pending waits
   * fail, and every held lock's `signal` aborts with `LockShutdownError`.
   */
  beforeApplicationShutdown(): void {
    this.engine.beginShutdown();
  }

  /**
   * Waits up to `shutdownTimeout` for held locks to be released as their code ends, leaves the
   * rest to expire, and closes the connections the module created.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.engine.close();
  }
}
