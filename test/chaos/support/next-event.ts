import { filter, firstValueFrom } from 'rxjs';
import type { LockEngine } from '../../../lib/engine/lock-engine.js';
import type { LockEvent, LockEventType } from '../../../lib/engine/lock.events.js';
import { within } from '../../integration/support/probes.js';

/**
 * The engine's next event of `type` (for `key`, when given), heard on its event stream: call it
 * before what causes the event. Fails with a name after `timeoutMs`.
 */
export function nextEvent<T extends LockEventType>(
  engine: LockEngine,
  type: T,
  key?: string,
  timeoutMs = 5_000,
): Promise<Extract<LockEvent, { type: T }>> {
  const event = firstValueFrom(
    engine.events$.pipe(
      filter(
        (event): event is Extract<LockEvent, { type: T }> =>
          event.type === type && (key === undefined || event.key === key),
      ),
    ),
  );
  return within(`a "${type}" event${key === undefined ? '' : ` for ${key}`}`, event, timeoutMs);
}
