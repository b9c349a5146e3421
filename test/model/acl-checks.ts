/**
 * The invariants of a revoked grant: while the services' ACL user lacks a command the library
 * uses, every call that fails fails with `LockStoreRefusedError` naming that command, and no
 * lock is reported stolen for it (an error read as a holder). Keys left without an expiry are
 * the every-step check's (model-world.ts).
 */
import type { AclWindow, History } from './model-history.js';
import { ms, type OutcomeRecord } from './model-records.js';

/** A call answered just after the grant came back may still carry the refusal. */
const TAIL_MS = 200;

/** Results that are no failure: contention, bad input, the run's own aborts and teardown. */
const FINE = new Set(['ok', 'busy', 'aborted', 'shutdown', 'overloaded']);

/** EVALSHA and EVAL run the same scripts: a refusal of either names the one refused. */
const names = (refused: string | undefined, command: string): boolean =>
  refused === command ||
  (['eval', 'evalsha'].includes(command) && ['eval', 'evalsha'].includes(refused ?? ''));

/** Someone else really could hold the key: an outside move on it, or a foreign client's lease. */
function othersCould(history: History, o: OutcomeRecord): boolean {
  const [start, end] = [BigInt(o.start), BigInt(o.end)];
  const removed = history.removals.some(
    (r) =>
      (r.keys === undefined || r.keys.some((k) => o.keys.includes(k))) && BigInt(r.from) <= end,
  );
  const foreign = [...history.sections.values()].some(
    (s) => s.svc < 0 && s.keys.some((k) => o.keys.includes(k)) && BigInt(s.enter) <= end && start <= BigInt(s.deadline),
  ); // prettier-ignore
  return removed || foreign;
}

function judged(history: History, o: OutcomeRecord, w: AclWindow): string | undefined {
  const stolen = o.reason === 'stolen' || o.released === 'stolen';
  if (stolen && !othersCould(history, o))
    return `${o.id} ${o.call}([${o.keys}]) reported its lock stolen while +${w.command} was revoked, with no other owner possible: a refusal read as a holder`;
  // Refused options are judged by refusalViolations (a kind refused needs a holder of another).
  if (FINE.has(o.result) || o.result === 'lost' || o.result === 'options') return undefined;
  if (o.result === 'store' && o.code === 'LOCK_STORE_REFUSED' && names(o.refused, w.command))
    return undefined;
  // A fault of its own (a cut, a delay, a restart) may fail it otherwise.
  if (
    o.result === 'store' &&
    o.code !== 'LOCK_STORE_REFUSED' &&
    history.faulted(o.svc, BigInt(o.start), BigInt(o.end))
  )
    // prettier-ignore
    return undefined;
  const as =
    o.code === 'LOCK_STORE_REFUSED'
      ? `a refusal naming "${o.refused}"`
      : `${o.result} (${o.code ?? 'no code'})`;
  return `${o.id} ${o.call}([${o.keys}]) failed while +${w.command} was revoked, as ${as}: ${o.message.slice(0, 160)}; a call that fails then must be LockStoreRefusedError naming ${w.command}`;
}

/** Calls reported per revoke and way of failing: a busy loop fails hundreds of times alike. */
const SHOWN = 2;

export function aclViolations(history: History): string[] {
  const found: string[] = [];
  for (const w of history.acl) {
    const seen = new Map<string, number>();
    for (const o of history.outcomes) {
      if (BigInt(o.start) > w.to + ms(TAIL_MS) || BigInt(o.end) < w.from) continue;
      const what = judged(history, o, w);
      if (!what) continue;
      const way = `${o.call} ${o.result} ${o.refused ?? ''} ${o.reason ?? o.released ?? ''}`;
      const count = (seen.get(way) ?? 0) + 1;
      seen.set(way, count);
      if (count <= SHOWN) found.push(`revoked -${w.command}: ${what}`);
    }
    for (const s of history.sections.values()) {
      if (s.lostReason !== 'stolen' || s.abortedAt === undefined) continue;
      const at = BigInt(s.abortedAt);
      if (at < w.from || at > w.to + ms(TAIL_MS)) continue;
      const as = { id: s.id, call: 'take', keys: s.keys, start: s.enter, end: s.abortedAt } as OutcomeRecord; // prettier-ignore
      if (!othersCould(history, as))
        found.push(
          `revoked -${w.command}: ${s.id}'s signal aborted as stolen at ${history.at(at)}, with no other owner possible: a refusal read as a holder`,
        );
    }
  }
  return found;
}
