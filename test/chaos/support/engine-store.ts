import type { Redis } from 'ioredis';
import type { LockEngine } from '../../../lib/engine/lock-engine.js';
import type { LockStore } from '../../../lib/stores/lock-store.interface.js';
import { scanKeys } from '../../harness/scan-keys.js';

/** The store an engine talks through (private), reached by a cast as `engineInternals` does. */
export function storeOf(engine: LockEngine): LockStore {
  return (engine as unknown as { context: { store: LockStore } }).context.store;
}

/**
 * Resolves once Redis has run every command the engine sent before: a PING on the engine's own
 * connection is answered after them, in order. A probe on another connection proves nothing,
 * since Redis may read that connection first.
 */
export async function caughtUp(engine: LockEngine): Promise<void> {
  await storeOf(engine).ping();
}

/** Lock keys (default prefix) in Redis now; fence counters and turn lists are not locks. */
export function lockKeys(probe: Redis): Promise<string[]> {
  return scanKeys(probe, 'lock:*');
}
