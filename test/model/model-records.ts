/**
 * What lock services (and the checker's own outside actors) report, as plain data (times are
 * `process.hrtime.bigint()` in decimal strings: one monotonic clock for every process on the
 * host, and JSON has no bigint). A service in a child process sends the same records over IPC.
 */
import type { LockKind } from '../../lib/stores/lock-store.interface.js';

/** The `svc` of a section held by a foreign client (a plain `SET NX PX` holder, not the library). */
export const FOREIGN = -1;

/** One holder's critical section, as the holder itself saw it. */
export interface SectionRecord {
  readonly id: string;
  /** The service, or FOREIGN. */
  readonly svc: number;
  /** Lock names as given (no prefix). */
  readonly keys: readonly string[];
  readonly kind: LockKind;
  readonly token: string;
  readonly enter: string;
  /** When the call that took it began: its lease can have been granted no earlier. */
  readonly asked?: string;
  /**
   * The lock's own claim, last sampled: now + `remainingTime()`. A holder that stops being
   * sampled (its process stopped or killed) is entitled to no more than this.
   */
  deadline: string;
  /**
   * The claim's changes, as [when sampled, claim] (the first and the latest few): what the lock
   * claimed at a given moment, e.g. when an outside move removed its lease.
   */
  claims?: [string, string][];
  leave?: string;
  /** When the holder learned the lock was gone (`signal` aborted or `isHeld` turned false). */
  lostAt?: string;
  /**
   * When its `signal` aborted: the only moment the holder's code is told to stop (`isHeld` is
   * read, not heard). Foreign holders have none: they stop by their own deadline.
   */
  abortedAt?: string;
  /** The `reason` of the `LockLostError` the signal aborted with (or the error's code). */
  lostReason?: string;
  readonly fences?: readonly number[];
  readonly minHold?: number;
  readonly ttl: number;
  readonly maxHold?: number;
  readonly autoRenew: boolean;
  /** `remainingTime()` as the code entered: what a local hand-off passed on. */
  readonly remaining: number;
  /** An `extend` to less than the lock's ttl was sent while held: a run-out is then expected. */
  shortened?: boolean;
  /** What `release()` answered, for a lock the driver released itself. */
  released?: string;
}

export type Result =
  'ok' | 'busy' | 'options' | 'aborted' | 'lost' | 'store' | 'shutdown' | 'overloaded' | 'other';

/** How one call ended. */
export interface OutcomeRecord {
  readonly id: string;
  readonly svc: number;
  readonly call: 'take' | 'loop' | 'release' | 'extend' | 'bulk';
  readonly keys: readonly string[];
  readonly kind: LockKind;
  readonly wait: number;
  readonly start: string;
  readonly end: string;
  readonly result: Result;
  readonly message: string;
  /** The error's `code` (e.g. LOCK_STORE_REFUSED). */
  readonly code?: string;
  /** `LockStoreRefusedError.refused`: the grant it names. */
  readonly refused?: string;
  /** `LockLostError.reason`. */
  readonly reason?: string;
  /** A release's answer ('released', 'expired', 'stolen'). */
  readonly released?: string;
}

export interface ViolationRecord {
  readonly svc: number;
  readonly what: string;
  /** Set when a SIGSTOP of the service at this moment would explain the finding. */
  readonly unlessPausedAt?: string;
}

/**
 * A look at Redis that found a lock claiming more than Redis holds for it, read between `from`
 * and `to`. Judged by the checker, which knows the outside moves that may explain it.
 */
export interface AuditRecord {
  readonly svc: number;
  readonly section: string;
  readonly key: string;
  readonly from: string;
  readonly to: string;
  readonly what: string;
}

/**
 * A stretch in which a process's event loop was held up: `lagMs` measured by
 * monitorEventLoopDelay somewhere in [from, to], or a busy wait the checker injected.
 * `svc` undefined: the checker's own process (its in-process services and foreign clients).
 */
export interface StallRecord {
  readonly svc?: number;
  /** A slow answer of Redis itself (the checker's probe pings it), not a process's loop. */
  readonly store?: boolean;
  readonly from: string;
  readonly to: string;
  readonly lagMs: number;
  readonly injected: boolean;
}

/** The kinds of outside move that remove a lock's lease from the store. */
export type RemovalKind =
  | 'forceRelease'
  | 'cli release --force'
  | 'DEL'
  | 'UNLINK'
  | 'FLUSHALL'
  | 'restart without persistence'
  | 'restart with persistence';

/** An outside move that removed leases: of `keys` (lock names), or of every key. */
export interface RemovalRecord {
  readonly kind: RemovalKind;
  readonly keys?: readonly string[];
  readonly from: string;
  /** OPEN while the move is still under way (its answer not back): it may have happened. */
  to: string;
  /** The service that asked (a forced release through its own LockService). */
  readonly svc?: number;
  /** False when the forced release found nothing to remove. */
  readonly released?: boolean;
}

/** The end of a window still open: a move under way, a grant not yet given back. */
export const OPEN = String(BigInt(Number.MAX_SAFE_INTEGER) * 1_000_000n);

/** A foreign client's compare-and-delete or compare-and-PEXPIRE of its own value. */
export interface CompareRecord {
  readonly id: string;
  readonly key: string;
  readonly op: 'compare-and-delete' | 'compare-and-expire';
  readonly sent: string;
  readonly answered: string;
  readonly ok: boolean;
  /** Its lease's end by its own clock when sent (send time of its SET or last PEXPIRE + ttl). */
  readonly liveUntil: string;
  /** When it sent the `SET NX` that won: its lease exists from no earlier. */
  readonly since: string;
  /** What the key held when the compare failed. */
  readonly found?: string | null;
}

/** One lock of a bulk hold, lost before its release, and what was known of its lease then. */
export interface BulkLoss {
  readonly key: string;
  readonly at: string;
  readonly reason: string;
  /** Its last sampled claim (now + remainingTime()). */
  readonly claim: string;
}

/** A bulk hold: `count` locks taken at once by one service and held together. */
export interface BulkRecord {
  readonly id: string;
  readonly svc: number;
  readonly count: number;
  readonly ttl: number;
  readonly start: string;
  readonly held: string;
  readonly end: string;
  /** Locks taken; the others failed (their outcomes say why). */
  readonly taken: number;
  readonly losses: readonly BulkLoss[];
  /**
   * Locks never told of a loss whose release answered other than 'released': `at` is when
   * the release was sent, `claim` the lock's last sampled claim.
   */
  readonly silent: readonly {
    readonly key: string;
    readonly at: string;
    readonly claim: string;
    readonly result: string;
  }[];
}

export type ServiceReport =
  | { readonly type: 'section'; readonly section: SectionRecord }
  | { readonly type: 'outcome'; readonly outcome: OutcomeRecord }
  | { readonly type: 'violation'; readonly violation: ViolationRecord }
  | { readonly type: 'audit'; readonly audit: AuditRecord }
  | { readonly type: 'stall'; readonly stall: StallRecord }
  | { readonly type: 'removal'; readonly removal: RemovalRecord }
  | { readonly type: 'bulk'; readonly bulk: BulkRecord }
  | { readonly type: 'compare'; readonly compare: CompareRecord };

export const now = (): bigint => process.hrtime.bigint();
export const nowText = (): string => String(now());
export const MS = 1_000_000n;
export const ms = (n: number): bigint => BigInt(Math.round(n)) * MS;

/** The end of a section for exclusion: the first of leaving, learning of the loss, the claim. */
export function sectionEnd(section: SectionRecord, at: bigint): bigint {
  let end = BigInt(section.deadline);
  if (section.leave !== undefined && BigInt(section.leave) < end) end = BigInt(section.leave);
  if (section.lostAt !== undefined && BigInt(section.lostAt) < end) end = BigInt(section.lostAt);
  return end < at ? end : at;
}

/**
 * When the holder's code was told to stop, or stopped: its signal's abort or its leaving,
 * whichever came first; undefined while neither has happened.
 */
export function toldEnd(section: SectionRecord): bigint | undefined {
  const times = [section.leave, section.abortedAt].filter((t) => t !== undefined);
  return times.length === 0 ? undefined : times.map(BigInt).reduce((a, b) => (a < b ? a : b));
}
