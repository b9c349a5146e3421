import type { LockKind, ReleaseResult } from '../../stores/lock-store.interface.js';
import type { LockLostError } from '../../errors/lock.errors.js';
import { lossOf } from './held-lock.js';
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
