/**
 * What lock services report to the checker, as plain data (times are `process.hrtime.bigint()`
 * in decimal strings: one monotonic clock for every process on the host, and JSON has no
 * bigint). A service in a child process sends the same records over IPC.
 */
import type { LockKind } from '../../lib/stores/lock-store.interface.js';

/** One holder's critical section, as the holder itself saw it. */
export interface SectionRecord {
  readonly id: string;
  readonly svc: number;
  /** Lock names as given (no prefix). */
  readonly keys: readonly string[];
  readonly kind: LockKind;
  readonly token: string;
  readonly enter: string;
  /**
   * The lock's own claim, last sampled: now + `remainingTime()`. A holder that stops being
   * sampled (its process stopped or killed) is entitled to no more than this.
   */
  deadline: string;
  leave?: string;
  /** When the holder learned the lock was gone (`signal` aborted or `isHeld` turned false). */
  lostAt?: string;
  readonly fences?: readonly number[];
  readonly minHold?: number;
  readonly ttl: number;
}

export type Result =
  'ok' | 'busy' | 'options' | 'aborted' | 'lost' | 'store' | 'shutdown' | 'other';

/** How one call ended. */
export interface OutcomeRecord {
  readonly id: string;
  readonly svc: number;
  readonly call: 'take' | 'loop' | 'release' | 'extend';
  readonly keys: readonly string[];
  readonly kind: LockKind;
  readonly wait: number;
  readonly start: string;
  readonly end: string;
  readonly result: Result;
  readonly message: string;
}

export interface ViolationRecord {
  readonly svc: number;
  readonly what: string;
  /** Set when a SIGSTOP of the service at this moment would explain the finding. */
  readonly unlessPausedAt?: string;
}

export type ServiceReport =
  | { readonly type: 'section'; readonly section: SectionRecord }
  | { readonly type: 'outcome'; readonly outcome: OutcomeRecord }
  | { readonly type: 'violation'; readonly violation: ViolationRecord };

export const now = (): bigint => process.hrtime.bigint();
export const nowText = (): string => String(now());
export const MS = 1_000_000n;

/** The end of a section for exclusion: the first of leaving, learning of the loss, the claim. */
export function sectionEnd(section: SectionRecord, at: bigint): bigint {
  let end = BigInt(section.deadline);
  if (section.leave !== undefined && BigInt(section.leave) < end) end = BigInt(section.leave);
  if (section.lostAt !== undefined && BigInt(section.lostAt) < end) end = BigInt(section.lostAt);
  return end < at ? end : at;
}
