import type { LockKind, ReleaseResult } from '../../stores/lock-store.interface.js';
import { LockOptionsError, type LockLostError } from '../../errors/lock.errors.js';
import { describeKind, type LockRequest } from '../request/lock-request.js';
import { lossOf, type HeldFrame } from './held-lock.js';
import type { Lock } from '../lock.interface.js';

/**
 * A reentrant acquisition of a lock the call chain already holds. It shares the outer lock's
 * token, fence and signal; releasing it is local, since only the outermost release releases.
 */
export class NestedLock implements Lock {
  private released = false;

  constructor(private readonly outer: Lock) {}

  get key(): string {
    return this.outer.key;
  }
  get keys(): readonly string[] {
    return this.outer.keys;
  }
  get kind(): LockKind {
    return this.outer.kind;
  }
  get token(): string {
    return this.outer.token;
  }
  get fence(): number | undefined {
    return this.outer.fence;
  }
  get fences(): readonly number[] | undefined {
    return this.outer.fences;
  }
  get signal(): AbortSignal {
    return this.outer.signal;
  }
  get isHeld(): boolean {
    return !this.released && this.outer.isHeld;
  }

  /** The outer lock's loss: the nested holder's code ran under it. */
  lossError(): LockLostError | undefined {
    return lossOf(this.outer, 'released');
  }

  remainingTime(): number {
    return this.released ? 0 : this.outer.remainingTime();
  }

  extend(ttl?: number): Promise<void> {
    return this.outer.extend(ttl);
  }

  async release(): Promise<ReleaseResult> {
    this.released = true;
    return 'released';
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}

// Reentrancy: a request from a call chain that already holds locks.

/**
 * A request made inside locks of `owner`: a nested handle when one of them covers its keys and
 * grants what it asks, a refusal when they cover only some of its keys, else none (it acquires).
 */
export function reentry(
  innermost: HeldFrame,
  owner: object,
  request: LockRequest,
): Promise<Lock> | undefined {
  const outer = findHeldLock(innermost, owner, request.fullKeys);
  if (outer) return reenter(outer, request);
  const overlap = countHeldKeys(innermost, owner, request.fullKeys);
  // Waiting for the rest while holding part would deadlock on our own keys.
  if (overlap > 0) return Promise.reject(partialReentry(request, overlap));
  return undefined;
}

/**
 * The innermost lock of `owner` held by the current async context that covers every one of
 * `fullKeys`, if any. Locks from another owner (another app) never match.
 */
function findHeldLock(
  innermost: HeldFrame,
  owner: object,
  fullKeys: readonly string[],
): Lock | undefined {
  for (let frame: HeldFrame | undefined = innermost; frame; frame = frame.parent) {
    if (frame.owner !== owner || !frame.lock.isHeld) continue;
    if (fullKeys.every((key) => frame.fullKeys.includes(key))) return frame.lock;
  }
  return undefined;
}

/** How many of `fullKeys` locks of `owner` held by the current async context cover. */
function countHeldKeys(innermost: HeldFrame, owner: object, fullKeys: readonly string[]): number {
  let frame: HeldFrame | undefined = innermost;
  const held = new Set<string>();
  for (; frame; frame = frame.parent) {
    if (frame.owner === owner && frame.lock.isHeld) frame.fullKeys.forEach((key) => held.add(key));
  }
  return fullKeys.filter((key) => held.has(key)).length;
}

/**
 * A nested handle on a lock the call chain holds, when it grants what is asked: the same kind,
 * or reading under a writer. Reading→writing would wait for the chain's own read lock.
 */
function reenter(outer: Lock, request: LockRequest): Promise<Lock> {
  const held = outer.kind;
  const asked = request.kind;
  const same = held.type === asked.type && limitOf(held) === limitOf(asked);
  if (same || (held.type === 'write' && asked.type === 'read')) {
    return Promise.resolve(new NestedLock(outer));
  }
  const why =
    held.type === 'read' && asked.type === 'write'
      ? "upgrading a read lock to a write lock would wait for this read lock for ever. Take it in mode 'write' from the start, or release the read lock first."
      : `it is already held here as ${describeKind(held)}, not as ${describeKind(asked)}.`;
  return Promise.reject(new LockOptionsError(`Lock "${request.label}": ${why}`, request.label));
}

function partialReentry(request: LockRequest, overlapping: number): LockOptionsError {
  return new LockOptionsError(
    `Lock "${request.label}": this call chain already holds ${overlapping} of its ${request.names.length} ` +
      'keys in another lock. Take all the keys in the outer lock, or release it first.',
    request.label,
  );
}

function limitOf(kind: LockKind): number | undefined {
  return kind.type === 'semaphore' ? kind.limit : undefined;
}
