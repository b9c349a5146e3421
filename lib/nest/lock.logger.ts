import { Logger, type LoggerService } from '@nestjs/common';
import type { LockEvent } from '../engine/lock.events.js';
import { lossAdvice } from '../errors/lock.errors.js';

/**
 * The lines an operator wants, written to Nest's `Logger` (context `LockModule`) or the module's
 * `logger`: the store going down and coming back (once each), a call the store refuses (once per
 * kind), a risky or unverifiable eviction policy, each lost lock, and the locks shutdown waits for. Contention and bad keys are expected outcomes,
 * and are not logged.
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
      case 'shutdown-waiting':
        return out.log(
          `Shutdown waits up to ${event.timeout} ms for ${event.keys.length} held lock(s) to be released: ` +
            `${listed(event.keys)}.`,
        );
      case 'eviction-unverified':
        return out.warn(
          `The lock store (${event.endpoint ?? 'store'}) cannot verify the eviction policy; make sure it is ` +
            `noeviction (${sentence(event.reason)})`,
        );
      case 'store-refused':
        return out.error(
          `The lock store (${event.endpoint ?? 'store'}) refuses a call, and will until it is fixed: ` +
            `${sentence(event.error.message)} ${refusalEffect(event.operation)}`,
        );
      case 'lost':
        return out.warn(
          `Lock "${event.key}" was lost while held (${event.reason}), after ${Math.round(event.held)} ms: ` +
            `mutual exclusion may have been broken. It was lost because ${lossAdvice[event.reason]}`,
        );
    }
  };
}

/** What a refusal stops: a refused PING only the checks, which no lock waits for. */
function refusalEffect(operation: string): string {
  return operation === 'ping'
    ? 'The startup and health checks fail; locks do not use PING, and work without it.'
    : 'Such locks fail with LockStoreRefusedError (HTTP 503).';
}

/** At most `LISTED_KEYS` keys, quoted, then how many more: one line, however many are held. */
function listed(keys: readonly string[]): string {
  const shown = keys.slice(0, LISTED_KEYS).map((key) => `"${key}"`);
  const more = keys.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

const LISTED_KEYS = 10;

/** `text` as a sentence: with one final period. */
function sentence(text: string): string {
  return text.endsWith('.') ? text : `${text}.`;
}
