import { randomBytes, randomFillSync } from 'node:crypto';
import { LockKeyError, LockOptionsError } from '../../errors/lock.errors.js';
import type { LockKind, LockStore } from '../../stores/lock-store.interface.js';
import {
  PROCESS_ID_CHARS,
  TOKEN_CHARS,
  TOKEN_CHECK_CHARS,
  tokenCheckOf,
} from '../../stores/lock-inspection.interface.js';
import type { LockOptions, ResolvedLockOptions } from './lock-options.interface.js';
import { describe, lockOptionsProblem } from './lock-options.validation.js';

/** A validated acquire request: everything is checked before any store call. */
export interface LockRequest {
  /** The caller's key names, in their order, without duplicates. */
  readonly names: readonly string[];
  /** The names joined, for messages and events. */
  readonly label: string;
  /** Store keys: prefix + name. */
  readonly fullKeys: readonly string[];
  readonly options: ResolvedLockOptions;
  /** Who may hold the key with this request: from the `limit` and `mode` options. */
  readonly kind: LockKind;
  /** `performance.now()` when the acquire was called. */
  readonly startedAt: number;
}

/**
 * Checks and resolves one acquire. `optionsChecked`: the options were validated already, and
 * cannot have changed since (a decorated method's, checked once when it was decorated).
 */
export function prepareLockRequest(
  key: unknown,
  options: LockOptions | undefined,
  prefix: string,
  defaults: ResolvedLockOptions,
  optionsChecked = false,
): LockRequest {
  const names = validateLockKeys(key);
  const label = names.length === 1 ? names[0] : names.join(' + ');
  const problem = optionsChecked ? undefined : lockOptionsProblem(options);
  if (problem) throw new LockOptionsError(`Lock "${label}": ${problem}`);
  const kind = kindOf(options);
  if (kind.type !== 'mutex' && names.length > 1) {
    throw new LockOptionsError(
      `Lock "${label}": ${describeKind(kind)} takes one key, got ${names.length}.`,
      label,
    );
  }
  return {
    names,
    label,
    fullKeys: names.length === 1 ? [prefix + label] : names.map((name) => prefix + name),
    options: readerOptions(kind, resolveLockOptions(defaults, options)),
    kind,
    startedAt: performance.now(),
  };
}

/** The lease asked of the store: never longer than `maxHold`. */
export function leaseTtlOf({ options }: Pick<LockRequest, 'options'>): number {
  return Math.min(options.ttl, options.maxHold ?? options.ttl);
}

/** Layers per-call options over defaults; `undefined` values do not override. */
export function resolveLockOptions(
  defaults: ResolvedLockOptions,
  options: LockOptions | undefined,
): ResolvedLockOptions {
  if (!options) return defaults;
  // Spelled out rather than merged in a loop: every resolved options object has one shape.
  return {
    ttl: options.ttl ?? defaults.ttl,
    wait: options.wait ?? defaults.wait,
    autoRenew: options.autoRenew ?? defaults.autoRenew,
    fencing: options.fencing ?? defaults.fencing,
    maxHold: options.maxHold ?? defaults.maxHold,
    minHold: options.minHold ?? defaults.minHold,
    signal: options.signal ?? defaults.signal,
  };
}

/** The longest margin a local deadline keeps before its lease can end in the store (ms). */
export const LEASE_MARGIN_MS = 25;

/**
 * The margin of a lease of `ttl` ms: `LEASE_MARGIN_MS`, or a tenth of the ttl for leases under
 * 250 ms. The watchdog aborts a held lock's `signal` at its local deadline, and a timer fires at
 * or after its time, never before: without a margin, the key could be free in Redis, and taken,
 * before the holder hears. The margin covers a timer that fires late by up to that much (a busy
 * event loop, a GC pause) and Redis's own rounding, which sets an expiry from its clock in whole
 * milliseconds. A loop stalled for longer can still hear late: that is what fencing is for.
 */
export function leaseMargin(ttl: number): number {
  return Math.min(LEASE_MARGIN_MS, ttl / 10);
}

/**
 * The one definition of a lease's validity, its local deadline: a lease of `ttl` ms sent at
 * `sentAt` cannot be over in `store` before then. It keeps the lease's margin (`leaseMargin`),
 * and the store's clock drift (Redlock). `ttl` is what was sent, which may be shorter than the
 * option (`maxHold`, `extend(shorter)`).
 */
export function leaseEnd(store: LockStore, sentAt: number, ttl: number): number {
  return sentAt + ttl - leaseMargin(ttl) - (store.drift?.(ttl) ?? 0);
}

/** True once a lease's local deadline has passed: a grant then must not be handed to a holder. */
export function isLate({ expiresAt }: { readonly expiresAt: number }): boolean {
  return performance.now() >= expiresAt;
}

/**
 * One queue per set of keys (in the caller's order), per kind (and limit) and per engine. Readers and
 * writers of one key queue apart: the store decides between them.
 */
export function queueKey({ fullKeys, kind }: Pick<LockRequest, 'fullKeys' | 'kind'>): string {
  if (kind.type === 'semaphore') return `${fullKeys[0]}\nsemaphore ${kind.limit}`;
  if (kind.type !== 'mutex') return `${fullKeys[0]}\n${kind.type}`;
  return fullKeys.length === 1 ? fullKeys[0] : fullKeys.join('\n');
}

/** Readers get no fence: `fencing` from the module's defaults is meant for the writers. */
function readerOptions(kind: LockKind, options: ResolvedLockOptions): ResolvedLockOptions {
  return kind.type === 'read' && options.fencing ? { ...options, fencing: false } : options;
}

// Kinds: mutex, semaphore, read and write locks.

export const MUTEX: LockKind = Object.freeze({ type: 'mutex' });
const READ: LockKind = Object.freeze({ type: 'read' });
const WRITE: LockKind = Object.freeze({ type: 'write' });

/** The kind named by checked options (`limit`, `mode`). */
export function kindOf(options: LockOptions | undefined): LockKind {
  if (options?.limit !== undefined) return { type: 'semaphore', limit: options.limit };
  if (options?.mode === undefined) return MUTEX;
  return options.mode === 'read' ? READ : WRITE;
}

/** For messages: "a mutex", "a semaphore of limit 3", "a read lock", "a write lock". */
export function describeKind(kind: LockKind): string {
  if (kind.type === 'semaphore') return `a semaphore of limit ${kind.limit}`;
  return kind.type === 'mutex' ? 'a mutex' : `a ${kind.type} lock`;
}

// Keys.

/** Longest key name accepted, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/**
 * The most keys one lock takes. A multi-key lock's acquire and release are each one script that
 * works through every key (and its fence counter and turn list) while Redis serves nobody else;
 * this keeps that call short.
 */
export const MAX_KEYS_PER_LOCK = 50;

const controlCharacter = /\p{Cc}/u;

/**
 * True for C0/C1 control characters and lone surrogates (which UTF-8 encodes as U+FFFD, so two
 * different names would share one Redis key).
 */
export function hasControlCharacter(text: string): boolean {
  // Most keys are short and plain: one pass over the code units settles them.
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f) || (unit >= 0xd800 && unit <= 0xdfff)) {
      return controlCharacter.test(text) || !text.isWellFormed();
    }
  }
  return false;
}

/** Empty or only white space: almost always an empty value where a name was meant. */
export function isBlank(text: string): boolean {
  // Most keys start with a printable ASCII character that is not a space: no trim needed.
  const first = text.charCodeAt(0);
  if (first > 0x20 && first < 0x7f) return false;
  return text.trim().length === 0;
}

/** Checks a key name, or a list of them for a multi-key lock, before anything reaches Redis. */
export function validateLockKeys(key: unknown): readonly string[] {
  if (Array.isArray(key)) {
    if (key.length === 0) {
      throw new LockKeyError('A multi-key lock needs at least one key; got an empty array.');
    }
    // Indexed: `forEach` skips the holes of a sparse array, which would become "undefined".
    for (let i = 0; i < key.length; i++) validateLockKey(key[i]);
    // Order is kept: `lock.fence` is the first key's fence, so callers choose which one it is.
    const names = [...new Set(key as string[])];
    if (names.length > MAX_KEYS_PER_LOCK) {
      throw new LockOptionsError(
        `A lock takes at most ${MAX_KEYS_PER_LOCK} keys (MAX_KEYS_PER_LOCK), got ${names.length}. ` +
          'Lock a coarser key, or take the keys in several locks, always in the same order.',
      );
    }
    return names;
  }
  validateLockKey(key);
  return [key as string];
}

function validateLockKey(key: unknown): void {
  if (typeof key !== 'string') {
    throw new LockKeyError(`A lock key must be a string, got ${describe(key)}.`);
  }
  if (isBlank(key)) {
    throw new LockKeyError(
      `A lock key must not be empty or only white space, got ${describe(key)}. Name the resource you are locking ` +
        '(an empty template value is the usual cause).',
    );
  }
  // A UTF-16 unit takes at most 3 UTF-8 bytes: short keys need no count.
  if (key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new LockKeyError(
      `Lock key ${describe(key)} is longer than ${MAX_KEY_BYTES} bytes. Lock on a short id, or a hash of the long value.`,
      key.slice(0, 40),
    );
  }
  // Also what keeps lock keys out of the companion keys' namespace, named behind a control
  // character (see COMPANION_SEPARATOR in stores/redis/redis-commands.ts); `keyPrefix` is held to the
  // same rule at bootstrap.
  if (hasControlCharacter(key)) {
    throw new LockKeyError(
      `Lock key ${describe(key)} contains a control character. Use printable characters only.`,
      key,
    );
  }
}

// Owner tokens.

/**
 * This process's id, the start of every token and queue id it makes: 48 random bits, drawn once.
 * A store's inspector reads a holder's process from it, at no extra call per lock (see
 * `OwnerRegistration`).
 */
export const PROCESS_ID = randomBytes((PROCESS_ID_CHARS * 3) / 4).toString('base64url');

/** The random part of a token: 14 base64url characters, 84 bits (the process id adds 48). */
const RANDOM_CHARS = TOKEN_CHARS - PROCESS_ID_CHARS - TOKEN_CHECK_CHARS;
/** The end of every token of this process, by which a store knows the library's values. */
const CHECK = tokenCheckOf(PROCESS_ID);
const POOL_TOKENS = 256;
/** 14 characters carry 10.5 bytes: the pool draws whole bytes for all its tokens at once. */
const pool = Buffer.alloc((RANDOM_CHARS * POOL_TOKENS * 3) / 4);
let encoded = '';
let next = POOL_TOKENS;

/**
 * A new owner token: this process's id, 84 random bits, then its check (see `tokenCheckOf`),
 * base64url (30 characters).
 * Random bytes are drawn and encoded in batches, with the process id written into the batch,
 * since a lock is often taken thousands of times a second: each token is then a slice of one
 * string, which costs far less than encoding bytes and joining strings per token.
 */
export function newLockToken(): string {
  if (next === POOL_TOKENS) refill();
  const start = next++ * TOKEN_CHARS;
  return encoded.slice(start, start + TOKEN_CHARS);
}

function refill(): void {
  randomFillSync(pool);
  const random = pool.toString('base64url');
  const tokens: string[] = [];
  for (let i = 0; i < POOL_TOKENS; i++) {
    tokens.push(PROCESS_ID, random.slice(i * RANDOM_CHARS, (i + 1) * RANDOM_CHARS), CHECK);
  }
  encoded = tokens.join('');
  next = 0;
}
