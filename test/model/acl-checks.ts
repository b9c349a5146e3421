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

/**
 * Someone else really could hold the key: an outside move on it, a foreign client's lease, or the
 * lock's own lease ran out before the call ended (then any waiter's grant may be there, even one
 * given back at once as late, which no section records).
 */
function othersCould(history: History, o: OutcomeRecord): boolean {
  const [start, end] = [BigInt(o.start), BigInt(o.end)];
  const own = history.sections.get(o.id.split('/')[0]!);
  if (own !== undefined && BigInt(own.deadline) <= end) return true;
  const removed = history.removals.some(
    (r) =>
      (r.keys === undefined || r.keys.some((k) => o.keys.includes(k))) && BigInt(r.from) <= end,
  );
  const foreign = [...history.sections.values()].some(
    (s) => s.svc < 0 && s.keys.some((k) => o.keys.includes(k)) && BigInt(s.enter) <= end && start <= BigInt(s.deadline),
  ); // prettier-ignore
  return removed || foreign;
}

function judged(
  history: History,
  o: OutcomeRecord,
  revoked: readonly string[],
): string | undefined {
  const grants = revoked.map((command) => `+${command}`).join(', ');
  const stolen = o.reason === 'stolen' || o.released === 'stolen';
  if (stolen && !othersCould(history, o))
    return `${o.id} ${o.call}([${o.keys}]) reported its lock stolen while ${grants} was revoked, with no other owner possible: a refusal read as a holder`;
  // Refused options are judged by refusalViolations (a kind refused needs a holder of another).
  if (FINE.has(o.result) || o.result === 'lost' || o.result === 'options') return undefined;
  const refusal = o.code === 'LOCK_STORE_REFUSED';
  if (o.result === 'store' && refusal && revoked.some((c) => names(o.refused, c))) return undefined;
  // A fault of its own (a cut, a delay, a restart) may fail it otherwise.
  if (o.result === 'store' && !refusal && history.faulted(o.svc, BigInt(o.start), BigInt(o.end)))
    return undefined;
  const as = refusal
    ? `a refusal naming "${o.refused}" (the wrong grant)`
    : `${o.result} (${o.code ?? 'no code'}, not a refusal)`;
  return `${o.id} ${o.call}([${o.keys}]) failed while ${grants} was revoked, as ${as}: ${o.message.slice(0, 160)}; a call that fails then must be LockStoreRefusedError naming the grant`;
}

/** Calls reported per revoke and way of failing: a busy loop fails hundreds of times alike. */
const SHOWN = 2;

/** The windows of grants revoked while [from, to] ran (a window counts on for TAIL_MS). */
function revokedDuring(history: History, from: bigint, to: bigint): AclWindow[] {
  return history.acl.filter((w) => from <= w.to + ms(TAIL_MS) && to >= w.from);
}

export function aclViolations(history: History): string[] {
  const found: string[] = [];
  const seen = new Map<string, number>();
  for (const o of history.outcomes) {
    const windows = revokedDuring(history, BigInt(o.start), BigInt(o.end));
    if (windows.length === 0) continue;
    const revoked = windows.map((w) => w.command);
    const what = judged(history, o, revoked);
    if (!what) continue;
    const way = `${revoked} ${o.call} ${o.result} ${o.refused ?? ''} ${o.reason ?? o.released ?? ''}`;
    const count = (seen.get(way) ?? 0) + 1;
    seen.set(way, count);
    if (count <= SHOWN) found.push(`revoked -${revoked.join(' -')}: ${what}`);
  }
  for (const w of history.acl) {
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
