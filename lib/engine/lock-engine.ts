import { LockBusyError, LockOptionsError } from '../errors/lock.errors.js';
import type { LockOptions, WithLockOptions } from './request/lock-options.interface.js';
import { checkOnLost, isPlainObject } from './request/lock-options.validation.js';
import { holdWhile, innermostFrame, runHoldingLock } from './hold/held-lock.js';
import { EngineContext, shutDown, type LockEngineConfig } from './engine-context.js';
import { LockAcquirer, type KeyEntry } from './acquire/lock-acquirer.js';
import { type LockEvent, traceAcquire, tracing } from './lock.events.js';
import type { Lock } from './lock.interface.js';
import { LockLeases } from './hold/lock-leases.js';
import { describeKind, prepareLockRequest, type LockRequest } from './request/lock-request.js';
import { NestedLock, reentry } from './hold/nested-lock.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import type { Observable } from 'rxjs';
import { LockInspections, waitersIn } from './lock-inspections.js';

export type { LockEngineConfig } from './engine-context.js';

/** With the instance id its process registers as the owner of its locks (see `inspections`). */
export type LockEngineSettings = LockEngineConfig & { readonly instanceId?: string };

/**
 * The lock engine: acquiring with a local FIFO queue per key, renewal, reentrancy, release and
 * shutdown, over any `LockStore`. Plain TypeScript; the Nest face wraps it.
 */
export class LockEngine {
  private readonly context: EngineContext;
  private readonly leases: LockLeases;
  private readonly acquirer: LockAcquirer;
  readonly events$: Observable<LockEvent>;
  private stopped?: Promise<void>;
  private closing?: Promise<void>;
  /** `inspect`, `list` and `forceRelease`, over the store's inspector, in the caller's key names. */
  readonly inspections: LockInspections;
  private unregister?: () => Promise<void>;

  constructor(private readonly config: LockEngineSettings) {
    this.context = new EngineContext(config);
    const busyKeys = new BusyKeys<KeyEntry>();
    this.leases = new LockLeases(this.context, busyKeys);
    const { store, keyPrefix, storeTimeout } = config;
    this.inspections = new LockInspections(store, keyPrefix, storeTimeout, {
      waiters: waitersIn(busyKeys),
      forced: (key, token) => this.leases.forcedRelease(key, token),
    });
    this.acquirer = new LockAcquirer(this.context, this.leases.parts, busyKeys);
    this.events$ = this.context.bus.asObservable();
  }

  /** The store the locks are taken in. */
  get store(): LockStore {
    return this.context.store;
  }

  /** Number of locks held through this engine (nested acquisitions not counted). */
  get heldCount(): number {
    return this.leases.size;
  }

  /** @internal Bookkeeping sizes, for leak checks in tests. */
  stats(): { queues: number; held: number } {
    return { queues: this.acquirer.queueCount, held: this.leases.size };
  }

  // Not async: every await between a release and the next holder's code delays the hand-off.
  acquire(key: string | readonly string[], options?: LockOptions): Promise<Lock> {
    try {
      return this.acquireRequest(this.prepare(key, options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async tryAcquire(
    key: string | readonly string[],
    options?: LockOptions,
  ): Promise<Lock | undefined> {
    const request = this.prepare(key, options);
    try {
      return await this.acquireRequest({ ...request, options: { ...request.options, wait: 0 } });
    } catch (error) {
      if (error instanceof LockBusyError) return undefined;
      throw error;
    }
  }

  async withLock<T>(
    key: string | readonly string[],
    fn: (lock: Lock) => T | Promise<T>,
    options?: WithLockOptions<T>,
  ): Promise<T> {
    const given = isPlainObject(options);
    const { onLost = 'throw', ...lockOptions } = given ? options : {};
    // Anything but an object is refused by `prepare`, as `acquire` refuses it.
    const request = this.prepare(key, given ? lockOptions : options);
    checkOnLost(onLost, request.label);
    const lock = await this.acquireRequest(request);
    return holdWhile(
      lock,
      () => runHoldingLock(this, lock, request.fullKeys, () => fn(lock)),
      onLost,
    );
  }

  /** Validates a key and options (unless `optionsChecked`) for this engine. Throws, never calls the store. */
  prepare(key: unknown, options?: LockOptions, optionsChecked = false): LockRequest {
    const { config, store } = this.context;
    const { keyPrefix, defaults } = config;
    const request = prepareLockRequest(key, options, keyPrefix, defaults, optionsChecked);
    if (request.options.fencing && store.supportsFencing === false) {
      throw new LockOptionsError(
        `Lock "${request.label}": this store cannot issue safe fencing tokens (Redlock has no single ` +
          'monotonic counter). Use a single Redis (or Sentinel) store for fenced locks.',
        request.label,
      );
    }
    const { type } = request.kind;
    if (type !== 'mutex' && !store.kinds?.includes(type)) {
      throw new LockOptionsError(
        `Lock "${request.label}": this store cannot lock ${describeKind(request.kind)}` +
          ' (Redlock offers the mutex only). Use a single Redis, Sentinel or Cluster store.',
        request.label,
      );
    }
    store.checkKeys?.(request.fullKeys);
    return request;
  }

  /**
   * Takes a validated request; returns a nested handle when the call chain holds the keys.
   * Traced on the `nestjs-distributed-lock:acquire` channel (see lock.events.ts).
   */
  acquireRequest(request: LockRequest): Promise<Lock> {
    if (!tracing.acquires.hasSubscribers) return this.take(request);
    return traceAcquire(
      { key: request.label, kind: request.kind, wait: request.options.wait },
      () => this.take(request),
      (lock) => lock instanceof NestedLock,
    );
  }

  private take(request: LockRequest): Promise<Lock> {
    const innermost = innermostFrame();
    return (innermost && reentry(innermost, this, request)) || this.acquirer.take(request);
  }

  /** Runs `fn` with `lock` recorded as held by the call chain. */
  runHolding<T>(lock: Lock, fullKeys: readonly string[], fn: () => T): T {
    return runHoldingLock(this, lock, fullKeys, fn);
  }

  /** Registers this process as the owner of its locks, and checks the store (`checkStore`). */
  async init(): Promise<void> {
    // First, whatever the checks find: a store that does not answer yet gets it when it is back.
    this.unregister ??= this.inspections.register(this.config.instanceId);
    await this.context.checkStore();
  }

  /** The calls the store refused in the last minute, one error per kind (for health). */
  get storeRefusals(): ReturnType<EngineContext['health']['recentRefusals']> {
    return this.context.health.recentRefusals();
  }

  /**
   * Starts shutdown: no new locks, pending waits fail and every held lock's `signal` aborts, with
   * `LockShutdownError`. `close()` does it too; the Nest face calls it first, before the HTTP
   * server waits for its requests, so that sections hear of the shutdown at once.
   */
  beginShutdown(): void {
    if (this.context.closed) return;
    this.context.closed = true;
    // Attempts already sent come back to a closed engine, which gives their wins back.
    this.stopped = this.acquirer.stop(shutDown(undefined));
    this.leases.abortAll();
  }

  /**
   * Shuts down (see `beginShutdown`), waits up to `shutdownTimeout` for every held lock to be
   * released, leaves the rest to expire, and lets go of the store.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.beginShutdown();
    await this.stopped;
    await this.leases.drain(this.context.config.shutdownTimeout);
    await this.context.deadlines.settled();
    await this.unregister?.();
    await this.context.config.closeStore();
    this.context.bus.complete();
  }
}

/**
 * The engine's table of the keys this process is busy with (see `KeyEntry`): the acquirer fills
 * it, and an unqueued lock takes itself out at its end. Keys map to slot numbers, and entries
 * sit in an array of slots, cleared and reused; decision 0012 says why not a `Map` of entries.
 */
export class BusyKeys<V extends object> {
  private readonly slotOf = new Map<string, number>();
  private readonly slots: (V | undefined)[] = [];
  private readonly freeSlots: number[] = [];

  get size(): number {
    return this.slotOf.size;
  }

  get(key: string): V | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.slots[slot];
  }

  set(key: string, entry: V): void {
    const slot = this.slotOf.get(key);
    if (slot !== undefined) {
      this.slots[slot] = entry;
      return;
    }
    const free = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.slots.length;
    this.slots[free] = entry;
    this.slotOf.set(key, free);
  }

  /** Drops `key` if its entry is still `entry` (another may have taken its place). */
  deleteIf(key: string, entry: V): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined || this.slots[slot] !== entry) return;
    this.slotOf.delete(key);
    this.slots[slot] = undefined;
    this.freeSlots.push(slot);
    // After a burst of many keys at once, let the grown arrays go.
    if (this.slotOf.size === 0 && this.slots.length > 1024) {
      this.slots.length = 0;
      this.freeSlots.length = 0;
    }
  }

  values(): V[] {
    return [...this.slotOf.values()].map((slot) => this.slots[slot]!);
  }
}
