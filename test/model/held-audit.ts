/**
 * A lock's word against the store: a lock that says it is held must find its token in Redis
 * under a lease that lasts at least as long as its own `remainingTime()` says (the local
 * deadline must never outlive the lease, after an `extend` to a shorter ttl too). Read through a
 * probe connection of the service's own process, which bypasses any delay proxy, so it sees what
 * Redis holds right now. Findings go to the checker, which knows the outside moves that may
 * explain them (a forced release, a DEL, a restart).
 */
import type { Cluster, Redis } from 'ioredis';
import { WAITERS_MARK } from '../../lib/stores/redis/scripts/lua-helpers.js';
import { now, type AuditRecord } from './model-records.js';
import type { OpenSection } from './section-book.js';

/** The letter a holder set puts before a token (semaphore, reader, writer). */
const MEMBER_LETTER = { semaphore: 's', read: 'r', write: 'w' } as const;

/**
 * Redis counts whole milliseconds (PTTL and TIME round down), and a lock's clock is another
 * process's: a lease this much shorter than the lock's claim is within rounding.
 */
export const ROUNDING_MS = 2;

/** Server time in ms. Every node runs on this host, so any node's clock will do. */
async function serverMs(probe: Redis | Cluster): Promise<number> {
  const [seconds, micros] = await probe.time();
  return Number(seconds) * 1000 + Number(micros) / 1000;
}

/**
 * How long Redis will still hold `token`'s lease at `fullKey`, in ms from its reply, or a
 * description of what it holds instead.
 */
async function leaseLeft(
  probe: Redis | Cluster,
  fullKey: string,
  section: OpenSection,
): Promise<number | string> {
  const { kind, token } = section.record;
  if (kind.type === 'mutex') {
    const [value, pttl] = await Promise.all([probe.get(fullKey), probe.pttl(fullKey)]);
    // The token may carry the waiters' mark: another process waits for the key.
    const ours = value === token || value === token + WAITERS_MARK;
    if (ours && pttl >= 0) return pttl;
    return `key holds ${JSON.stringify(value)} (pttl ${pttl})`;
  }
  const member = MEMBER_LETTER[kind.type] + token;
  const [score, time] = await Promise.all([probe.zscore(fullKey, member), serverMs(probe)]);
  if (score !== null && Number(score) + 1 > time) return Number(score) - time;
  const ended =
    score === null ? 'no such member' : `a lease ended ${Math.round(time - Number(score))} ms ago`;
  return `holder set has ${ended}`;
}

/**
 * Findings among `sections` whose locks say they are held before and after Redis answered:
 * the key is not theirs, or its lease ends before the lock's own deadline.
 */
export async function auditHeld(
  probe: Redis | Cluster,
  prefix: string,
  sections: Iterable<OpenSection>,
  skip: (section: OpenSection) => boolean,
): Promise<Omit<AuditRecord, 'svc'>[]> {
  const checks = [...sections]
    .filter((section) => !section.releasing && section.lock.isHeld && !skip(section))
    .map(async (section): Promise<Omit<AuditRecord, 'svc'> | undefined> => {
      const sent = now();
      const claimed = section.lock.remainingTime();
      const lefts = await Promise.all(
        section.record.keys.map((key) => leaseLeft(probe, prefix + key, section)),
      );
      const answered = now();
      // Read again after the reply: a lock that still says held at this point claims the lease
      // covered the moment Redis answered, which came before it.
      if (section.releasing || !section.lock.isHeld || section.lock.remainingTime() <= 1) return;
      // Redis's lease ends at most `left` after its reply; the lock's, `claimed` after `sent`.
      const took = Number(answered - sent) / 1e6;
      const found = lefts.findIndex(
        (left) => typeof left === 'string' || left < claimed - took - ROUNDING_MS,
      );
      if (found < 0) return;
      const left = lefts[found]!;
      const what =
        typeof left === 'string'
          ? `${section.record.id} isHeld with ${Math.round(claimed)} ms left, but on "${section.record.keys[found]}" the ${left}`
          : `${section.record.id} claims ${Math.round(claimed)} ms left, but Redis holds "${section.record.keys[found]}" for ${Math.round(left)} ms more (the local deadline outlives the lease)`;
      return {
        section: section.record.id,
        key: section.record.keys[found]!,
        from: String(sent),
        to: String(answered),
        what,
      };
    });
  const results = await Promise.all(checks.map((check) => check.catch(() => undefined)));
  return results.filter((result) => result !== undefined);
}
