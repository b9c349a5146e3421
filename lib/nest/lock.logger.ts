import { Logger, type LoggerService } from '@nestjs/common';
import type { LockEvent } from '../engine/lock.events.js';

/**
 * The lines an operator wants, written to Nest's `Logger` (context `LockModule`) or the module's
 * `logger`: the store going down and coming back (once each), a risky eviction policy, and
 * each lost lock. Contention and bad keys are expected outcomes, and are not logged.
 */
export function lockLog(logger: LoggerService | false | undefined): (event: LockEvent) => void {
  if (logger === false) return () => undefined;
  const out = logger ?? new Logger('LockModule');
  return (event) => {
    switch (event.type) {
      case 'store-down':
        return out.error(
          `The lock store (${event.endpoint ?? 'store'}) ${event.atStartup ? 'does not answer at startup' : 'stopped answering'}: ` +
            `${sentence(event.error.message)} Locks fail with LockStoreError (HTTP 503) until it is back.`,
        );
      case 'store-up':
        return out.log(
          `The lock store (${event.endpoint ?? 'store'}) answers again, after ${Math.round(event.downFor)} ms.`,
        );
      case 'unsafe-eviction':
        return out.warn(
          `The lock store (${event.endpoint ?? 'store'}) has maxmemory-policy "${event.policy}": Redis may evict ` +
            "a held lock's key under memory pressure, and another client can then take it. Set " +
            'maxmemory-policy noeviction on the Redis that holds locks.',
        );
      case 'lost':
        return out.warn(
          `Lock "${event.key}" was lost while held (${event.reason}), after ${Math.round(event.held)} ms: ` +
            'mutual exclusion may have been broken.',
        );
    }
  };
}

/** `text` as a sentence: with one final period. */
function sentence(text: string): string {
  return text.endsWith('.') ? text : `${text}.`;
}
