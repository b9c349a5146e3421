import { filter, firstValueFrom, type Observable } from 'rxjs';
import type { LockEvent, LockEventType } from '../../lib/engine/lock.events.js';
import { within } from './waits.js';

/** Anything with the lock event stream: the engine, or `LockService` over it. */
export interface EventSource {
  readonly events$: Observable<LockEvent>;
}

/** Records every event of `source` until `stop()`. */
export function recordEvents(source: EventSource): { events: LockEvent[]; stop(): void } {
  const events: LockEvent[] = [];
  const subscription = source.events$.subscribe((event) => events.push(event));
  return { events, stop: () => subscription.unsubscribe() };
}

/**
 * The next event of `type` (for `key`, when given) on `source`'s stream: call it before what
 * causes the event. Fails with a name after `timeoutMs`.
 */
export function nextEvent<T extends LockEventType>(
  source: EventSource,
  type: T,
  key?: string,
  timeoutMs = 5_000,
): Promise<Extract<LockEvent, { type: T }>> {
  const event = firstValueFrom(
    source.events$.pipe(
      filter(
        (event): event is Extract<LockEvent, { type: T }> =>
          event.type === type && (key === undefined || event.key === key),
      ),
    ),
  );
  return within(`a "${type}" event${key === undefined ? '' : ` for ${key}`}`, event, timeoutMs);
}
