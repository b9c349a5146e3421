import type { Redis } from 'ioredis';
import type { Lock } from '../../lib/engine/lock.interface.js';
import type { LockEvent } from '../../lib/engine/lock.events.js';
import { LockLostError } from '../../lib/errors/lock.errors.js';

/**
 * The holder of `lock` was told its key is gone: its signal aborted with `LockLostError`
 * (reason `vanished`: removed before its lease ended, not taken by someone else), a `lost` event
 * said so, and renewal did not bring the key back.
 */
export async function expectLostKeyGone(
  lock: Lock,
  key: string,
  events: readonly LockEvent[],
  probe: Redis,
): Promise<void> {
  expect(lock.signal.reason).toBeInstanceOf(LockLostError);
  expect(lock.signal.reason).toMatchObject({ key, reason: 'vanished' });
  expect(lock.isHeld).toBe(false);
  expect(events).toContainEqual(expect.objectContaining({ type: 'lost', key, reason: 'vanished' }));
  expect(await probe.exists(`lock:${key}`)).toBe(0);
}
