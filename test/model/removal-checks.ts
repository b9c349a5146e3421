/**
 * The invariants about what others do to a lock. A lease an outside move removed (a forced
 * release, DEL/UNLINK, FLUSHALL, a restart) is reported to its holder: a forced release within
 * FORCED_RELEASE_BOUND_MS of its answer, any other removal at the latest by the lease's own
 * deadline; a local hand-off never passes on a lease removed before its holder let go; and a
 * foreign client always finds its own value as it wrote it.
 */
import { FOREIGN_MARGIN_MS } from './foreign-client.js';
import {
  FORCED_RELEASE_BOUND_MS,
  leaseMargin,
  MEASURE_MS,
  REPORT_SLACK_MS,
} from './lease-bounds.js';
import { FAULT_TAIL, type History } from './model-history.js';
import {
  FOREIGN,
  ms,
  type OutcomeRecord,
  type RemovalRecord,
  type SectionRecord,
} from './model-records.js';

/** Store faults and loop stalls past this, on the holder's service, excuse a late forced report. */
const FAULT_STALL_MS = 50;

const covers = (removal: RemovalRecord, keys: readonly string[]): boolean =>
  removal.keys === undefined || removal.keys.some((key) => keys.includes(key));

const forced = (removal: RemovalRecord): boolean =>
  removal.kind === 'forceRelease' || removal.kind === 'cli release --force';

/**
 * The removals that took `section`'s lease. 'maybe': any that could have (its lease possibly
 * granted before the move ended, and not yet over by its claim when the move began): the
 * lenient reading, for excuses. 'surely': moves that began after the lease was granted and
 * ended before it was over, with the holder still inside: for what the holder owes. A restart
 * with persistence keeps what its SAVE held, so it is never sure to have taken a lease.
 */
export function removalsOf(
  history: History,
  section: SectionRecord,
  how: 'maybe' | 'surely',
): RemovalRecord[] {
  const origin = BigInt(history.originOf(section).enter);
  const enter = BigInt(section.enter);
  const claim = BigInt(section.deadline);
  // A hand-off after the move is removal-checks' to judge, not to excuse: only a lease passed on
  // before the move ended may have been taken by it.
  const previous = history.handedOffBy(section);
  const granted = history.grantedFrom(section);
  const passed = previous ? BigInt(previous.leave ?? section.enter) : granted;
  return history.removals.filter((removal) => {
    if (!covers(removal, section.keys)) return false;
    const [from, to] = [BigInt(removal.from), BigInt(removal.to)];
    if (how === 'maybe') return granted < to && passed < to && claim > from;
    if (removal.kind === 'restart with persistence') return false;
    const inside = section.leave === undefined || BigInt(section.leave) > to;
    const held = history.claimAt(section, to) > to + ms(REPORT_SLACK_MS);
    return origin < from && enter < from && held && inside;
  });
}

/**
 * When the holder learned its lease was gone: its signal aborted, its release answered other
 * than 'released', or its call (the lock's, its release, an extend) failed.
 */
export function reportedAt(history: History, section: SectionRecord): bigint | undefined {
  const times: bigint[] = [];
  if (section.abortedAt !== undefined) times.push(BigInt(section.abortedAt));
  const failed = (o: OutcomeRecord): boolean => o.result === 'lost' || o.result === 'store';
  for (const o of history.outcomesOf(section.id)) if (failed(o)) times.push(BigInt(o.end));
  for (const o of [...history.outcomesOf(`${section.id}/release`), ...history.outcomesOf(`${section.id}/extend`)]) // prettier-ignore
    if (failed(o) || (o.released !== undefined && o.released !== 'released')) times.push(BigInt(o.end)); // prettier-ignore
  return times.length === 0 ? undefined : times.reduce((a, b) => (a < b ? a : b));
}

/** A PEXPIRE sent before a removal is answered, and its deadline sampled, within this long. */
const ANSWER_MS = 50;

function unreported(history: History, at: bigint): string[] {
  const found: string[] = [];
  for (const section of history.sections.values()) {
    if (section.svc === FOREIGN) continue;
    for (const removal of removalsOf(history, section, 'surely')) {
      const [from, to] = [BigInt(removal.from), BigInt(removal.to)];
      const { svc } = section;
      // Its deadline as it stood when the lease was removed: a renewal that "succeeded" since
      // renewed nothing. But a PEXPIRE applied before the removal and answered after it moved
      // the deadline rightly: the claims until its answer count (a reply's time, or as long as
      // a fault on its service held replies back).
      const claim = history.claimUntil(
        section,
        to + (history.faulted(svc, from, to) ? FAULT_TAIL : ms(ANSWER_MS)),
      );
      if (history.frozen(svc, from, claim)) continue;
      // The forced bound holds unless a fault was on the holder's service: then its deadline.
      const hindered =
        history.faulted(svc, from, to + ms(FORCED_RELEASE_BOUND_MS)) ||
        history.acl.some((w) => w.from <= to + ms(FORCED_RELEASE_BOUND_MS) && from <= w.to) ||
        history.trafficStalled(svc, from, to + ms(FORCED_RELEASE_BOUND_MS)) >= FAULT_STALL_MS;
      const byForce = forced(removal) && !hindered;
      // By its deadline, and a loop held up past the margin then may be that much later.
      const margin = leaseMargin(section.ttl);
      const late = history.loopStalled(
        svc,
        claim - ms(margin),
        claim + ms(FORCED_RELEASE_BOUND_MS),
      );
      const bound = byForce
        ? to + ms(FORCED_RELEASE_BOUND_MS)
        : claim + ms(REPORT_SLACK_MS + (late >= margin - MEASURE_MS ? late : 0));
      const reported = reportedAt(history, section);
      if (reported !== undefined && reported <= bound) continue;
      if (reported === undefined && at <= bound) continue;
      // Its code left in time: its release is its next store call, and reports when answered;
      // with a fault on its service, the release may fail, unheard, as the lease runs out.
      const left = section.leave !== undefined && BigInt(section.leave) <= bound;
      if (left && (reported !== undefined || hindered)) continue;
      const told =
        reported === undefined
          ? section.released !== undefined
            ? `its release answered '${section.released}'`
            : 'it was never told'
          : `it was told only at ${history.at(reported)}`;
      const limit = byForce
        ? `within ${FORCED_RELEASE_BOUND_MS} ms of the forced release's answer`
        : `by its lease's own deadline (${history.at(claim)})`;
      // The cause, where the checker sees it: the lease went on to a waiter here.
      const next = history.handedOffTo(section);
      const cause = next ? ` (${REMOVED_HAND_OFF}, to ${next.id})` : '';
      found.push(
        `${section.id} held [${section.keys}] when ${removal.kind} removed it (${history.at(from)}–${history.at(to)}), and ${told}: a removed lease must be reported ${limit}${cause}`,
      );
    }
  }
  return found;
}

/** Marks a finding that a hand-off of a removed lease explains: the defect is the hand-off. */
export const REMOVED_HAND_OFF = 'a local hand-off of a removed lease';

/**
 * The removal that took the lease `section` was handed off locally, before its previous holder
 * let go (so a hand-off that checked with Redis could not have passed it on); undefined if none.
 */
export function removedBeforeHandOff(
  history: History,
  section: SectionRecord,
  how: 'maybe' | 'surely' = 'surely',
): RemovalRecord | undefined {
  if (section.svc === FOREIGN) return undefined;
  const previous = history.handedOffBy(section);
  if (!previous?.leave) return undefined;
  // 'maybe' names the likely cause of a violation seen (the lease granted before the move
  // ended); 'surely' is a violation by itself (granted before the move began).
  const origin = how === 'surely' ? BigInt(history.originOf(section).enter) : history.grantedFrom(section); // prettier-ignore
  return history.removals.find(
    (removal) =>
      removal.kind !== 'restart with persistence' &&
      covers(removal, section.keys) &&
      origin < BigInt(how === 'surely' ? removal.from : removal.to) &&
      BigInt(removal.to) < BigInt(previous.leave!),
  );
}

/** A local hand-off may pass on only a lease Redis still held when its holder let go. */
function handedOffRemoved(history: History): string[] {
  const found: string[] = [];
  for (const section of history.sections.values()) {
    const removal = removedBeforeHandOff(history, section);
    if (removal) {
      const previous = history.handedOffBy(section)!;
      found.push(
        `${section.id} entered at ${history.at(section.enter)} by a local hand-off from ${previous.id}, which let go at ${history.at(previous.leave!)}, of a lease ${removal.kind} had removed (${history.at(removal.from)}–${history.at(removal.to)}): the hand-off passed on a lease Redis no longer held`,
      );
    }
  }
  return found;
}

/** A foreign client's compare-and-delete and compare-and-expire succeed on its own live lock. */
function foreignValueChanged(history: History): string[] {
  const found: string[] = [];
  for (const c of history.compares) {
    const [sent, answered, live] = [BigInt(c.sent), BigInt(c.answered), BigInt(c.liveUntil)];
    if (c.ok || sent >= live) continue;
    const granted = BigInt(c.since);
    const removed = history.removals.some(
      (r) => covers(r, [c.key]) && BigInt(r.from) < answered && BigInt(r.to) > granted,
    );
    // Its own process, or Redis, held up past the margin it keeps: the compare may be late.
    const slow =
      history.loopStalled(FOREIGN, sent, answered) >= FOREIGN_MARGIN_MS - MEASURE_MS ||
      history.storeStalled(sent, answered) >= FOREIGN_MARGIN_MS - MEASURE_MS;
    if (removed || slow) continue;
    found.push(
      `foreign client ${c.id}'s ${c.op} of "${c.key}" failed on its own live lock (${Number((live - sent) / 1_000_000n)} ms left): the key holds ${JSON.stringify(c.found ?? null)}, a value the library must not write`,
    );
  }
  return found;
}

export function removalViolations(history: History, at: bigint): string[] {
  return [
    ...unreported(history, at),
    ...handedOffRemoved(history),
    ...foreignValueChanged(history),
  ];
}
