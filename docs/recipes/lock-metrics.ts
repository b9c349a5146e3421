import type { Meter } from '@opentelemetry/api';
import type { LockEvent } from 'nestjs-distributed-lock';
import type { Observable, Subscription } from 'rxjs';

/**
 * OpenTelemetry metrics from `LockService.events$`: wait and hold times as histograms, and
 * counters of busy locks, lost locks and store errors. Call it once at startup, e.g. in a
 * provider's `onModuleInit`: `recordLockMetrics(locks.events$, metrics.getMeter('locks'))`.
 * Lock keys are left out of the attributes on purpose: one series per key would grow without
 * bound. Tested by test/integration/otel-metrics.spec.ts.
 */
export function recordLockMetrics(events$: Observable<LockEvent>, meter: Meter): Subscription {
  const waitTime = meter.createHistogram('lock.wait.duration', {
    unit: 'ms',
    description: 'Time from asking for a lock to holding it, or to giving up on it.',
  });
  const holdTime = meter.createHistogram('lock.hold.duration', {
    unit: 'ms',
    description: 'Time a lock was held, from acquire to release.',
  });
  const busy = meter.createCounter('lock.busy', {
    description: 'Acquires that found the lock busy.',
  });
  const lost = meter.createCounter('lock.lost', { description: 'Locks lost while held.' });
  const storeErrors = meter.createCounter('lock.store.errors', {
    description: 'Store calls that failed or timed out.',
  });
  return events$.subscribe((event) => {
    switch (event.type) {
      case 'acquired':
        return waitTime.record(event.waited, { 'lock.outcome': 'acquired' });
      case 'busy':
        busy.add(1);
        return waitTime.record(event.waited, { 'lock.outcome': 'busy' });
      case 'released':
        return holdTime.record(event.held, { 'lock.result': event.result });
      case 'lost':
        return lost.add(1, { 'lock.reason': event.reason });
      case 'error':
        return storeErrors.add(1, { 'lock.operation': event.operation });
    }
  });
}
