/**
 * Liveness, judged at the end of a run from the same records: a waiter is never left waiting
 * while its key is free for longer than a stated bound, and a waiter in line is not passed over
 * without limit by other services. Only waits no fault touched are judged (a stopped process can
 * keep a turn reserved, a delay can hold a lease past its section).
 */
import { TURN_GRACE, writerPatience } from '../../lib/policy/wait-policy.js';
import type { LockKind } from '../../lib/stores/lock-store.interface.js';
import type { History } from './model-history.js';
import type { RunSetup } from './model-ops.js';
import { MS, sectionEnd, type OutcomeRecord, type SectionRecord } from './model-records.js';

/** A waiter is surely in line (subscribed, in the turn list) this long after it starts. */
const ARRIVE_MS = 100;
/** A released key is deleted within one round trip of its holder leaving: generous on 2 cores. */
const RELEASE_MS = 150;

const blocks = (holder: LockKind, waiter: LockKind): boolean =>
  !(holder.type === 'read' && waiter.type === 'read') &&
  !(holder.type === 'semaphore' && waiter.type === 'semaphore' && holder.limit === waiter.limit);

/**
 * Whether `section`'s release failed in the store (refused by a revoked grant, or Redis out of
 * reach): its key then stays held for the rest of its lease.
 */
function releaseFailed(history: History, section: SectionRecord): boolean {
  const calls = [...history.outcomesOf(section.id), ...history.outcomesOf(`${section.id}/release`)];
  return calls.some((o) => o.result === 'store' && BigInt(o.end) >= BigInt(section.leave ?? o.end));
}

/**
 * Longest stretch in [from, to] in which `waiter` could have had every key it asked for: no
 * blocking holder inside, and fewer semaphore holders than its limit. A holder blocks until it
 * left plus the release's round trip, or until its `minHold` ran out.
 */
function longestFree(history: History, waiter: OutcomeRecord, from: bigint, to: bigint): number {
  const edges: [bigint, number, number][] = [];
  for (const s of history.sections.values()) {
    if (s.id === waiter.id || !s.keys.some((key) => waiter.keys.includes(key))) continue;
    const enter = BigInt(s.enter);
    let end = sectionEnd(s, to) + BigInt(RELEASE_MS) * MS;
    // A release that failed in the store leaves the key held for the rest of its lease.
    if (releaseFailed(history, s)) end = BigInt(s.deadline) < to ? BigInt(s.deadline) : to;
    if (s.minHold !== undefined && enter + BigInt(s.minHold) * MS + BigInt(RELEASE_MS) * MS > end)
      end = enter + BigInt(s.minHold + RELEASE_MS) * MS;
    const sameLimit =
      s.kind.type === 'semaphore' &&
      waiter.kind.type === 'semaphore' &&
      s.kind.limit === waiter.kind.limit;
    if (!sameLimit && !blocks(s.kind, waiter.kind)) continue;
    edges.push([enter, sameLimit ? 0 : 1, 1], [end, sameLimit ? 0 : 1, -1]);
  }
  edges.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const limit = waiter.kind.type === 'semaphore' ? waiter.kind.limit : 1;
  const count = [0, 0];
  let freeSince: bigint | undefined = from;
  let longest = 0n;
  const close = (at: bigint): void => {
    if (freeSince === undefined) return;
    const start = freeSince > from ? freeSince : from;
    const end = at < to ? at : to;
    if (end - start > longest) longest = end - start;
    freeSince = undefined;
  };
  for (const [at, type, delta] of edges) {
    count[type]! += delta;
    const free = count[1]! <= 0 && count[0]! < limit;
    if (!free) close(at);
    else if (freeSince === undefined) freeSince = at;
  }
  close(to);
  return Number(longest / MS);
}

/** When the waiter stopped waiting: its section's entry if it got the lock, else its end. */
function waitEnd(history: History, o: OutcomeRecord): bigint | undefined {
  if (o.result === 'busy') return BigInt(o.end);
  if (o.result !== 'ok') return undefined;
  const section = history.sections.get(o.id);
  return section ? BigInt(section.enter) : undefined;
}

/** Another call of the same service ahead of it in its local line, for other keys or kind. */
function queuedBehindOwn(history: History, o: OutcomeRecord): boolean {
  return history.outcomes.some(
    (other) =>
      other !== o &&
      other.svc === o.svc &&
      BigInt(other.start) < BigInt(o.start) &&
      BigInt(other.end) > BigInt(o.start) &&
      other.keys.some((key) => o.keys.includes(key)) &&
      (other.keys.length > 1 || other.kind.type !== o.kind.type || o.keys.length > 1),
  );
}

export function livenessViolations(
  history: History,
  setup: RunSetup,
  lagMs: number,
  fairTurns: boolean,
): string[] {
  const found: string[] = [];
  // Faults, outside moves and long stalls alike: a moved world owes no bounded wait.
  const anyFault = (from: bigint, to: bigint): boolean =>
    setup.services.some((_, svc) => history.faulted(svc, from, to)) || history.anyFault(from, to);
  // A restart with persistence brings back leases its snapshot held and that were released
  // since; nobody releases them again, so they stay for their whole ttl: the world stays moved.
  const restored = history.removals
    .filter((r) => r.kind === 'restart with persistence')
    .map((r) => BigInt(r.from));
  const movedFrom = restored.length > 0 ? restored.reduce((a, b) => (a < b ? a : b)) : undefined;
  const maxPoll = Math.max(...setup.services.map((s) => s.pollCap));
  const handoffs = Math.max(...setup.services.map((s) => s.localHandoffs));
  for (const o of history.outcomes) {
    if ((o.call !== 'take' && o.call !== 'loop') || o.wait < 300) continue;
    const from = BigInt(o.start) + BigInt(ARRIVE_MS) * MS;
    const to = waitEnd(history, o);
    if (
      to === undefined ||
      to <= from ||
      anyFault(BigInt(o.start), to) ||
      (movedFrom !== undefined && to > movedFrom) ||
      queuedBehindOwn(history, o)
    )
      continue;
    // Bound: one poll of its own, a turn reserved for a process that left, a gone writer's
    // mark (readers only), and twice the worst event-loop stall seen.
    const poll = setup.services[o.svc]!.pollCap;
    const bound =
      poll + TURN_GRACE + (o.kind.type === 'read' ? writerPatience(maxPoll) : 0) + 200 + 2 * lagMs;
    const free = longestFree(history, o, from, to);
    if (free > bound) {
      found.push(
        `${o.id} waited (${o.result}) while [${o.keys}] was free for ${free} ms (bound ${Math.round(bound)} ms)`,
      );
    }
    // Turns in line are the mutex's, and only where the store keeps waiter lists (Redis).
    if (!fairTurns || o.result !== 'busy' || o.keys.length > 1 || o.kind.type !== 'mutex') continue;
    // Passed over: each other service ahead in line gets one turn plus its local hand-offs.
    const others = [...history.sections.values()].filter(
      (s: SectionRecord) =>
        s.svc !== o.svc &&
        // A foreign client takes no turn: it spins past the line, as `SET NX` does.
        s.svc >= 0 &&
        s.keys.includes(o.keys[0]!) &&
        s.kind.type === 'mutex' &&
        BigInt(s.enter) > from &&
        BigInt(s.enter) < to,
    );
    const allowed = 2 * (setup.services.length - 1) * (handoffs + 1) + 4;
    if (others.length > allowed) {
      found.push(
        `${o.id} waited ${o.wait} ms for "${o.keys[0]}" in vain while other services took it ${others.length} times (bound ${allowed})`,
      );
    }
  }
  return found;
}
