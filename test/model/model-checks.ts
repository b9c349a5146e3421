/**
 * The safety invariants, judged from the holders' own records on one monotonic clock: mutual
 * exclusion by kind (a holder is inside until its code is told to stop), fences that only
 * increase, and calls that fail only for a reason the run gave them.
 */
import type { LockKind } from '../../lib/stores/lock-store.interface.js';
import { maxConcurrent, type Interval } from '../harness/intervals.js';
import { leaseMargin, MEASURE_MS } from './lease-bounds.js';
import type { History } from './model-history.js';
import { FOREIGN, ms, MS, sectionEnd, toldEnd, type SectionRecord } from './model-records.js';
import { removalsOf, removedBeforeHandOff, REMOVED_HAND_OFF } from './removal-checks.js';

interface Span {
  readonly section: SectionRecord;
  readonly enter: bigint;
  /** When the holder was told to stop (or stopped), unless its loop could not hear it. */
  readonly end: bigint;
  /** Its claim: the lease's end by the lock's own clock. */
  readonly claim: bigint;
}

/** Two kinds that may not hold one key together (semaphores of one limit are counted instead). */
function excludes(a: LockKind, b: LockKind): boolean {
  if (a.type === 'read' && b.type === 'read') return false;
  return !(a.type === 'semaphore' && b.type === 'semaphore' && a.limit === b.limit);
}

const kindText = (kind: LockKind): string =>
  kind.type === 'semaphore' ? `semaphore(${kind.limit})` : kind.type;

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * Whether the holder's process could not hear its lease end in time: stopped, killed, or its
 * loop held up by more than the margin around the claim (by measurement or by the checker's
 * own busy wait). Such a holder is inside only until its claim.
 */
function deafThen(history: History, section: SectionRecord, claim: bigint, told: bigint): boolean {
  const margin = leaseMargin(section.ttl);
  const from = claim - ms(margin + MEASURE_MS);
  if (history.frozen(section.svc, from, told)) return true;
  return history.loopStalled(section.svc, from, told) >= margin - MEASURE_MS;
}

/**
 * Each section's span. A library holder is inside until its code was told to stop (its signal
 * aborted) or left: the promise is that the signal aborts before anyone else can have the key.
 * A foreign holder is trusted to stop by its own deadline. A span is cut where an outside move
 * removed its lease (a forced release, DEL, FLUSHALL, a restart): from then on, others may
 * rightly be granted the key; removal-checks.ts judges how soon the holder had to hear of it.
 */
function spansByKey(history: History, at: bigint): Map<string, Span[]> {
  const byKey = new Map<string, Span[]>();
  for (const section of history.sections.values()) {
    const enter = BigInt(section.enter);
    const claim = min(BigInt(section.deadline), at);
    let end: bigint;
    if (section.svc === FOREIGN) end = sectionEnd(section, at);
    else {
      const told = min(toldEnd(section) ?? at, at);
      end = told > claim && deafThen(history, section, claim, told) ? claim : told;
    }
    for (const removal of removalsOf(history, section, 'maybe')) {
      end = min(end, max(enter, BigInt(removal.from)));
    }
    if (end <= enter) continue;
    for (const key of section.keys) {
      const spans = byKey.get(key) ?? [];
      spans.push({ section, enter, end, claim });
      byKey.set(key, spans);
    }
  }
  return byKey;
}

export function exclusionViolations(history: History, at: bigint): string[] {
  const found: string[] = [];
  const span = (s: Span): string =>
    `${s.section.id} (${kindText(s.section.kind)}, ${history.at(s.enter)}–${history.at(s.end)})`;
  for (const [key, spans] of spansByKey(history, at)) {
    spans.sort((a, b) => (a.enter < b.enter ? -1 : a.enter > b.enter ? 1 : 0));
    for (let i = 0; i < spans.length; i++) {
      for (let j = i + 1; j < spans.length; j++) {
        const [a, b] = [spans[i]!, spans[j]!];
        if (!(b.enter < a.end && a.enter < b.end)) continue;
        if (!excludes(a.section.kind, b.section.kind)) continue;
        // The root cause named, where the checker can see it: one of them runs on a lease an
        // outside move removed before it was handed off to it.
        const cause = [a, b].some((s) => removedBeforeHandOff(history, s.section, 'maybe'))
          ? ` (${REMOVED_HAND_OFF})`
          : '';
        if (b.enter < a.claim)
          found.push(`"${key}": ${span(a)} and ${span(b)} both inside${cause}`);
        else
          found.push(
            `"${key}": ${a.section.id}'s lease ended by its own clock at ${history.at(a.claim)}, ` +
              `${b.section.id} was granted the key and entered at ${history.at(b.enter)}, and ` +
              `${a.section.id}'s signal aborted only at ${history.at(a.end)}: the signal aborted after another holder's grant${cause}`,
          );
      }
    }
    const limits = new Set(
      spans.flatMap(({ section: { kind } }) => (kind.type === 'semaphore' ? [kind.limit] : [])),
    );
    for (const limit of limits) {
      const same = spans.filter(
        ({ section: { kind } }) => kind.type === 'semaphore' && kind.limit === limit,
      );
      const claimed = maxConcurrent(same.map(({ enter, end, claim }): Interval => [enter, min(end, claim)])); // prettier-ignore
      const told = maxConcurrent(same.map(({ enter, end }): Interval => [enter, end]));
      if (claimed > limit)
        found.push(`"${key}": ${claimed} holders inside a semaphore of limit ${limit}`);
      else if (told > limit)
        found.push(
          `"${key}": ${told} holders inside a semaphore of limit ${limit}, one past its lease's end: the signal aborted after another holder's grant`,
        );
    }
  }
  return found;
}

/** A holder that entered after another left must carry a larger fence for that key. */
export function fenceViolations(history: History): string[] {
  const found: string[] = [];
  const byKey = new Map<
    string,
    { fence: number; enter: bigint; leave: bigint; id: string; token: string }[]
  >();
  for (const section of history.sections.values()) {
    if (!section.fences || section.leave === undefined) continue;
    section.keys.forEach((key, i) => {
      const fence = section.fences![i];
      if (fence === undefined) return;
      const list = byKey.get(key) ?? [];
      list.push({
        fence,
        enter: BigInt(section.enter),
        leave: BigInt(section.leave!),
        id: section.id,
        token: section.token,
      });
      byKey.set(key, list);
    });
  }
  for (const [key, list] of byKey) {
    for (const a of list) {
      for (const b of list) {
        const before = a.leave <= b.enter;
        if (
          (before && a.fence >= b.fence) ||
          (a !== b && a.token !== b.token && a.fence === b.fence)
        ) {
          found.push(`"${key}": fence ${a.fence} (${a.id}) then ${b.fence} (${b.id})`);
        }
      }
    }
  }
  return [...new Set(found)];
}

/**
 * A late grant refused, truthfully: the call did take longer than the lease it sent (a lease
 * shorter than the store's round trip, e.g. a small `maxHold`), so no holder could act on it.
 */
function lateGrantRefused(message: string, start: string, end: string): boolean {
  const late = /answer came (\d+) ms after the request, later than the lease of (\d+) ms/.exec(
    message,
  );
  if (!late) return false;
  const lease = Number(late[2]);
  return Number(late[1]) >= lease && Number(BigInt(end) - BigInt(start)) / 1e6 >= lease - 1;
}

/**
 * Calls fail only as the run allows: busy, refused options, aborted, lost, a store error while
 * a fault was on (or in its tail), or a grant refused for coming after its lease. Anything else
 * is a defect.
 */
export function outcomeViolations(history: History): string[] {
  return history.outcomes
    .filter(({ result, svc, start, end, message }) => {
      if (result === 'other') return true;
      if (result !== 'store' || lateGrantRefused(message, start, end)) return false;
      // A call that met a revoked grant is judged by acl-checks.ts.
      if (history.acl.some((w) => w.from <= BigInt(end) && BigInt(start) <= w.to)) return false;
      return !history.faulted(svc, BigInt(start), BigInt(end));
    })
    .map(
      (o) =>
        `${o.id} ${o.call}([${o.keys}], ${kindText(o.kind)}) failed at ${history.at(o.end)} with no fault to blame: ${o.message}`,
    );
}

/** A holder blocks other kinds until it left, or its `minHold` ran out, plus a release's trip. */
const REFUSAL_SLACK = 150n * MS;

const sameKind = (a: LockKind, b: LockKind): boolean =>
  a.type === b.type && (a.type !== 'semaphore' || a.limit === (b as { limit: number }).limit);

/**
 * A call refused because the key "is held as" another kind must have met a holder of that
 * kind: one inside (or within its `minHold`) while the call ran. Judged only while no fault was on.
 */
export function refusalViolations(history: History, at: bigint): string[] {
  const found: string[] = [];
  for (const o of history.outcomes) {
    if (o.result !== 'options' || !/but it is held as/.test(o.message)) continue;
    const [start, end] = [BigInt(o.start), BigInt(o.end)];
    // Any fault: a delayed or stopped holder keeps a lease its section no longer shows.
    if (history.anyFault(start, end)) continue;
    const holder = [...history.sections.values()].some((s) => {
      if (sameKind(s.kind, o.kind) || !s.keys.some((key) => o.keys.includes(key))) return false;
      const enter = BigInt(s.enter);
      const held = enter + BigInt(s.minHold ?? 0) * MS;
      const until = (sectionEnd(s, at) > held ? sectionEnd(s, at) : held) + REFUSAL_SLACK;
      // Its acquire took the key up to a round trip before its code entered.
      return enter - REFUSAL_SLACK <= end && start <= until;
    });
    // A call of another kind that gave up while its attempt was in flight may have won and
    // given the win back: for that round trip the key was held, by no section.
    const givenBack = history.outcomes.some(
      (other) =>
        other.result !== 'ok' &&
        !sameKind(other.kind, o.kind) &&
        other.keys.some((key) => o.keys.includes(key)) &&
        BigInt(other.start) <= end &&
        start <= BigInt(other.end) + REFUSAL_SLACK,
    );
    if (!holder && !givenBack) {
      found.push(`${o.id} refused at ${history.at(o.end)} with no other kind inside: ${o.message}`);
    }
  }
  return found;
}
