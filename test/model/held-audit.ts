/**
 * `isHeld` against the store: a lock that says it is held must find its token in Redis under a
 * live lease. Read through a probe connection of the service's own process, which bypasses any
 * delay proxy, so it sees what Redis holds right now.
 */
import type { Cluster, Redis } from 'ioredis';
import { WAITERS_MARK } from '../../lib/stores/redis/scripts/lua-helpers.js';
import type { OpenSection } from './section-book.js';

/** The letter a holder set puts before a token (semaphore, reader, writer). */
const MEMBER_LETTER = { semaphore: 's', read: 'r', write: 'w' } as const;

/** Server time in ms. Every node runs on this host, so any node's clock will do. */
async function serverMs(probe: Redis | Cluster): Promise<number> {
  const [seconds, micros] = await probe.time();
  return Number(seconds) * 1000 + Number(micros) / 1000;
}

/** What Redis holds for one key of `section`'s lock, or undefined when it is the lock's. */
async function leaseProblem(
  probe: Redis | Cluster,
  fullKey: string,
  section: OpenSection,
): Promise<string | undefined> {
  const { kind, token } = section.record;
  if (kind.type === 'mutex') {
    const [value, pttl] = await Promise.all([probe.get(fullKey), probe.pttl(fullKey)]);
    // PTTL 0: under a millisecond left, the key still there. The token may carry the waiters'
    // mark: another process waits for the key.
    const ours = value === token || value === token + WAITERS_MARK;
    if (ours && pttl >= 0) return undefined;
    return `key holds ${JSON.stringify(value)} (pttl ${pttl})`;
  }
  const member = MEMBER_LETTER[kind.type] + token;
  const [score, time] = await Promise.all([probe.zscore(fullKey, member), serverMs(probe)]);
  if (score !== null && Number(score) + 1 > time) return undefined;
  return `holder set has ${score === null ? 'no such member' : `a lease ended ${Math.round(time - Number(score))} ms ago`}`;
}

/**
 * Violations among `sections` whose locks say they are held before and after Redis answered;
 * `excused` skips locks a Redis restart wiped.
 */
export async function auditHeld(
  probe: Redis | Cluster,
  prefix: string,
  sections: Iterable<OpenSection>,
  excused: (section: OpenSection) => boolean,
): Promise<{ id: string; what: string }[]> {
  const checks = [...sections]
    .filter((section) => !section.releasing && section.lock.isHeld && !excused(section))
    .map(async (section) => {
      const problems = await Promise.all(
        section.record.keys.map((key) => leaseProblem(probe, prefix + key, section)),
      );
      // Read again after the reply: a lock that still says held at this point claims the lease
      // covered the moment Redis answered, which came before it.
      // Redis counts whole milliseconds: a lease with under 1 ms left is too close to call.
      if (section.releasing || !section.lock.isHeld || section.lock.remainingTime() <= 1) return;
      const found = problems.findIndex((problem) => problem !== undefined);
      if (found < 0) return;
      const left = Math.round(section.lock.remainingTime());
      const what =
        `${section.record.id} isHeld with ${left} ms left, but on "${section.record.keys[found]}" ` +
        `the ${problems[found]}`;
      return { id: section.record.id, what };
    });
  const results = await Promise.all(checks.map((check) => check.catch(() => undefined)));
  return results.filter((result) => result !== undefined);
}
