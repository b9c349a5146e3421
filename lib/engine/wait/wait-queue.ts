import { newLockToken, queueKey, type LockRequest } from '../request/lock-request.js';
import type { LockKind } from '../../stores/lock-store.interface.js';
import { fallbackDelay } from '../../policy/wait-policy.js';
import { LocalHandoffs } from './local-handoffs.js';
import { PendingCalls } from './pending-calls.js';
import type { ReleaseListener } from '../../stores/lock-store.interface.js';
import type { AttemptOutcome, Grant, KeyTable, Waiter } from './wait.types.js';
import { WakeLatch } from './wake-latch.js';

/** What a queue needs from the engine; one driver serves every queue. */
export interface QueueDriver {
  /** Subscribes to release notifications for every key of the queue. */
  subscribe(queue: WaitQueue, onRelease: ReleaseListener): Promise<() => void>;
  /** The queue stopped waiting: take it out of the store's turn list. */
  leaveTurns(queue: WaitQueue): void;
  /** Gives back a grant no waiter wants any more. */
  discard(queue: WaitQueue, grant: Grant): void;
  /** The keys this process is busy with: a queue with nothing left to do takes itself out. */
  readonly busyKeys: KeyTable;
  /**
   * Longest sleep of `queue` between attempts when no notification comes: `pollCap`, longer
   * while many queues wait at once (see `pollInterval`), except for a writer, whose mark holds
   * readers back only as long as it keeps trying.
   */
  pollCapOf(queue: WaitQueue): number;
  /** Counts the queues that wait (`1` when one starts, `-1` when it ends). */
  waiting(change: 1 | -1): void;
  /** Most hand-offs in a row that keep a lock inside this process (see `nextLocalHolder`). */
  readonly localHandoffs: number;
  /** How long the store keeps a key for a process whose turn it is, if it keeps turns. */
  readonly turnGrace?: number;
}

/**
 * The one owner of a lock's keys in this process (one per set of keys, kind and limit): its
 * waiters, first in, first out; how many locks of it this process holds; and how the lock moved
 * here lately (its local hand-offs). Only the head talks to the store, through attempts of its
 * own; the others wait their turn in memory, so a hot key costs the store one attempt per
 * process and not one per request. The store calls tell it what they found (`noteRelease`,
 * `successorAnswered`, `handOffAnswered`), and it delivers grants to its waiters: it never
 * reaches up to the locks or the acquirer.
 */
export class WaitQueue {
  private readonly waiters: Waiter[] = [];
  /** Waiters a local hand-off is being confirmed for: a semaphore's holders release together. */
  private readonly handing = new Set<Waiter>();
  private readonly latch = new WakeLatch();
  private queueId?: string;
  /** Locks on this queue's keys held by this process. */
  private holders = 0;
  private running = false;
  private unsubscribe?: () => void;
  private readonly pending = new PendingCalls();
  private readonly handoffs: LocalHandoffs;
  /** The head's last attempt failed, so the store may have this queue in its turn list. */
  private inLine = false;
  /** This queue's entry in the busy keys table (see `queueKey`). */
  private readonly busyKey: string;
  /** The store's keys this queue waits for (prefix applied). */
  readonly keys: readonly string[];
  /** The keys as the caller named them, for messages. */
  readonly label: string;
  readonly kind: LockKind;
  /** How many locks of the queue this process may hold at once (see `holdersPerProcess`). */
  private readonly capacity: number;

  constructor(
    private readonly driver: QueueDriver,
    { fullKeys, label, kind }: LockRequest,
  ) {
    this.keys = fullKeys;
    this.busyKey = queueKey({ fullKeys, kind });
    this.label = label;
    this.kind = kind;
    this.capacity = holdersPerProcess(kind);
    this.handoffs = new LocalHandoffs(driver.localHandoffs, this.capacity);
  }

  /** Names this queue in the store's turn list and in notifications of whose turn it is. */
  get id(): string {
    // Made on first use: most queues live for one uncontended lock and never need it.
    return (this.queueId ??= newLockToken());
  }

  /** True when an attempt may skip the queue: nobody here holds, waits or tries. */
  get free(): boolean {
    return this.holders === 0 && this.pending.outside === 0 && this.waiters.length === 0;
  }

  /** True when this process holds as many locks of the queue as it may. */
  get full(): boolean {
    return this.holders >= this.capacity;
  }

  /** The lock held here was handed off by another holder here (see `LocalHandoffs`). */
  get handedOff(): boolean {
    return this.handoffs.handedOff;
  }

  /** True while some waiter here still wants the lock. */
  get waiting(): boolean {
    return this.waiters.length > 0;
  }

  /** How many requests wait in this queue (for `inspect`). */
  get waiterCount(): number {
    return this.waiters.length;
  }

  /** An attempt sent at `sentAt` outside the queue. */
  beginOutsideAttempt(sentAt = performance.now()): void {
    this.pending.beginOutside(sentAt);
  }

  /** `wake`: let the head try now (not when the key just went to another process's turn). */
  endOutsideAttempt(acquired: boolean, wake = true): void {
    this.pending.endOutside();
    if (acquired) this.addHolder();
    if (wake) this.latch.notify();
    this.settleIfIdle();
  }

  /** An outside attempt under this queue's id found the key busy: the store may list it. */
  joinedLine(): void {
    this.inLine = true;
  }

  /** A lock taken before this queue existed now counts as held here (see `LockAcquirer`). */
  holderJoined(): void {
    this.addHolder();
  }

  /** Queues a waiter; `first` puts it ahead of those that arrived while it was trying. */
  enqueue(waiter: Waiter, first = false): void {
    if (first) this.waiters.unshift(waiter);
    else this.waiters.push(waiter);
    if (!this.running) void this.run();
  }

  /** Takes out a waiter that gave up (deadline or abort). */
  withdraw(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter);
    if (index >= 0) this.waiters.splice(index, 1);
    this.latch.notify();
  }

  /**
   * A lock of this queue held here was released or lost. After a release, the next waiter here
   * normally tries at once (its attempt rides right behind the release). When other processes
   * were waiting last time (`othersWaiting`), it waits for the release notification like they do
   * instead, so the lock does not stay inside this process for as long as it has waiters.
   */
  holderLeft(released: boolean): void {
    this.holders--;
    if (!(released && this.handoffs.othersWaiting && this.unsubscribe)) this.latch.notify();
    this.settleIfIdle();
  }

  /**
   * The waiter that may take over a lock released here (see `LocalHandoffs.mayHandOff`): the
   * first in line that no other hand-off is on its way to, if it needs no fence of its own and
   * the lock may be handed off once more here. The hand-off it gets is confirmed in the store
   * first: until `handOffAnswered`, that call counts as an attempt in flight
   * (`beginOutsideAttempt`), so that the head does not also try.
   */
  nextLocalHolder(): Waiter | undefined {
    const next = this.handing.size === 0 ? this.waiters[0] : this.waiters.find(this.notHanded);
    // A reader waits only for a writer, which must not find the key handed among readers here.
    if (!next || this.kind.type === 'read' || next.takeOverTtl === undefined) return;
    if (!this.handoffs.mayHandOff(this.holders)) return;
    this.handing.add(next);
    return next;
  }

  /**
   * The store answered a hand-off: `grant` when it still held the lease, now `waiter`'s. Without
   * one (the key was gone, or someone else's), the head tries in the store at once.
   */
  handOffAnswered(waiter: Waiter, grant: Grant | undefined): void {
    this.handing.delete(waiter);
    if (grant) this.hand(waiter, grant, 'hand-off');
    this.endOutsideAttempt(false);
  }

  private readonly notHanded = (waiter: Waiter): boolean => !this.handing.has(waiter);

  /**
   * The head, if a release about to be sent may hand it the key in the same call (see
   * `ReleaseOptions.successor`). Until `successorAnswered`, it counts as an attempt in flight,
   * so the head does not also try on its own.
   */
  successorWaiter(): Waiter | undefined {
    const head = this.waiters[0];
    // A successor lease is set in a mutex key only.
    if (head?.takeOverTtl === undefined || this.kind.type !== 'mutex') return undefined;
    this.beginOutsideAttempt();
    return head;
  }

  /**
   * The release answered: `grant` when the successor now holds the key. After a release that
   * gave the key to another process's turn (see `noteRelease`), the head waits to be called.
   */
  successorAnswered(successor: Waiter, grant: Grant | undefined): void {
    if (grant) this.hand(successor, grant, 'successor');
    this.endOutsideAttempt(false, !this.handoffs.othersWaiting);
  }

  /**
   * What the store said about waiters elsewhere when a lock of this queue was released. When
   * nobody else waited after all, the next waiter here tries now instead of waiting for a wake-up.
   */
  noteRelease(waitersElsewhere: boolean, requeued: boolean): void {
    this.handoffs.othersWaiting = waitersElsewhere;
    if (!waitersElsewhere) this.latch.notify();
    else if (requeued) this.backInLine();
  }

  /**
   * A release put this queue back in the store's line (see `ReleaseOptions.requeue`). If its
   * waiters gave up meanwhile, it leaves the line at once rather than be called for nothing.
   */
  private backInLine(): void {
    if (!this.running) return this.driver.leaveTurns(this);
    this.inLine = true;
    // Heads that only ever got the key from a release never subscribed: the call to its turn
    // would go unheard. Its attempt subscribes first (and, the key being reserved, just fails).
    if (!this.unsubscribe) this.latch.notify();
  }

  /** Fails every waiter (shutdown). */
  failAll(error: unknown): void {
    for (const waiter of this.waiters.splice(0)) waiter.fail(error);
    this.latch.notify();
  }

  private async run(): Promise<void> {
    this.running = true;
    this.driver.waiting(1);
    try {
      while (this.waiters.length > 0) {
        if (this.full || this.pending.outside > 0) {
          // Listen already: a release here may hand this queue's turn to another process, and
          // the call back to this queue must not go unheard.
          if (!this.unsubscribe && !(await this.listen())) continue;
          await this.latch.wait(this.driver.pollCapOf(this));
          continue;
        }
        this.latch.clear();
        const head = this.waiters[0];
        const outcome = await this.attempt(head);
        if (!outcome) continue;
        if ('grant' in outcome) this.hand(head, outcome.grant);
        else await this.latch.wait(fallbackDelay(outcome.pttl, this.driver.pollCapOf(this)));
      }
    } finally {
      this.running = false;
      this.driver.waiting(-1);
      if (this.inLine) this.driver.leaveTurns(this);
      this.inLine = false;
      this.settleIfIdle();
    }
  }

  /**
   * When the store call this queue is blocked on was sent, if one is in flight. A waiter whose
   * wait runs out while the store has not answered for that long was kept waiting by the store,
   * not by a holder.
   */
  unansweredSince(): number | undefined {
    return this.pending.since();
  }

  /** Subscribes first (so no release between attempt and sleep is missed), then tries. */
  private async attempt(head: Waiter): Promise<AttemptOutcome | undefined> {
    if (!(await this.listen())) return undefined;
    const outcome = await this.storeStep(() => head.attempt(this.id));
    if (outcome) this.inLine = 'pttl' in outcome;
    return outcome;
  }

  /** Subscribes to release notifications once per busy spell; false (all failed) on error. */
  private async listen(): Promise<boolean> {
    this.unsubscribe ??= await this.storeStep(() =>
      this.driver.subscribe(this, (turn) => this.heard(turn)),
    );
    return this.unsubscribe !== undefined;
  }

  /**
   * One store call the whole queue waits on, timed for `unansweredSince`. A failure fails every
   * waiter here at once (the store is failing for all of them, not just the head) rather than
   * making each wait for its own timeout in turn; it then resolves `undefined`.
   */
  private async storeStep<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await this.pending.timing(call);
    } catch (error) {
      this.failAll(error);
      return undefined;
    }
  }

  private heard(turn: string | undefined): void {
    if (turn === undefined || turn === this.id) return this.latch.notify();
    // Another process's turn: keep the place in line, but look again when its reservation
    // would lapse, in case that process is gone.
    if (this.driver.turnGrace !== undefined) this.latch.wakeWithin(this.driver.turnGrace);
  }

  /**
   * A grant from the store (an attempt) or from a release here that set a successor lease was
   * won with the head's options (ttl, fencing), so only the head may take it. A local hand-off
   * was confirmed for its waiter's own lease, wherever it now stands in line; it counts towards
   * the hand-offs in a row. A grant nobody here can take goes back.
   */
  private hand(waiter: Waiter, grant: Grant, from: GrantFrom = 'store'): void {
    const at =
      from === 'hand-off' ? this.waiters.indexOf(waiter) : this.waiters[0] === waiter ? 0 : -1;
    if (at < 0) return this.driver.discard(this, grant);
    this.waiters.splice(at, 1);
    this.addHolder(from);
    waiter.deliver(grant);
  }

  private addHolder(from: GrantFrom = 'store'): void {
    this.holders++;
    if (from === 'hand-off') this.handoffs.count++;
    else this.handoffs.restart(from === 'successor');
  }

  /**
   * Once nobody here holds, waits or tries, the queue is done. The subscription lives until
   * then, not just while someone waits: on a hot key the queue empties and fills between
   * hand-offs, and subscribing each time would cost two commands per lock.
   */
  private settleIfIdle(): void {
    if (this.running || !this.free) return;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.driver.busyKeys.deleteIf(this.busyKey, this);
  }
}

/** Where a lock held here came from: its own attempt, a successor lease, or a local hand-off. */
type GrantFrom = 'store' | 'successor' | 'hand-off';

/** How many locks of this kind one process may hold on the key at once. */
function holdersPerProcess(kind: LockKind): number {
  if (kind.type === 'semaphore') return kind.limit;
  return kind.type === 'read' ? Infinity : 1;
}
