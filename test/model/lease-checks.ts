/**
 * The invariants about leases over time: a lock claims no more than Redis holds for it (audits,
 * after an `extend` to a shorter ttl too); a lease is lost only for a reason the run gave it; a
 * local hand-off passes on as much lease as the recipient's rules ask, no more, no less; a lease
 * that ran out while its process's loop was held up is reported within a loop turn of the stall.
 */
import { leaseMargin, MEASURE_MS, REPORT_SLACK_MS, TURN_MS } from './lease-bounds.js';
import type { History } from './model-history.js';
import { FOREIGN, ms, toldEnd, type SectionRecord } from './model-records.js';
import {
  removalsOf,
  removedBeforeHandOff,
  REMOVED_HAND_OFF,
  reportedAt,
} from './removal-checks.js';
import { ROUNDING_MS } from './held-audit.js';

/** Marks a loss that a hand-off from a holder without renewal explains. */
export const NOT_RENEWED_HAND_OFF =
  'a lease handed off by a holder that does not renew, never renewed for its recipient';

/** A measured stall this long counts as one the invariants judge (not the loop's jitter). */
const JUDGED_STALL_MS = 50;

/** Audit findings no outside move explains. */
function auditViolations(history: History): string[] {
  const found: string[] = [];
  for (const audit of history.audits) {
    const to = BigInt(audit.to);
    const section = history.sections.get(audit.section);
    // A removed lease excuses the lock's word only until the deadline it had when removed.
    const removed = section
      ? removalsOf(history, section, 'maybe').some(
          (r) =>
            BigInt(r.from) <= to &&
            BigInt(audit.from) <= history.claimAt(section, BigInt(r.to)) + ms(REPORT_SLACK_MS),
        )
      : history.removals.some(
          (r) => (r.keys === undefined || r.keys.includes(audit.key)) && BigInt(r.from) <= to,
        );
    const cause =
      section && removedBeforeHandOff(history, section, 'maybe') ? ` (${REMOVED_HAND_OFF})` : '';
    if (!removed) found.push(`s${audit.svc}: ${audit.what}${cause}`);
  }
  return found;
}

/** Why `section` lost its lease at `at`, if the run gave it a reason; undefined if none. */
function blame(
  history: History,
  section: SectionRecord,
  at: bigint,
  reason: string,
): string | undefined {
  const { svc, ttl } = section;
  const claim = BigInt(section.deadline);
  if (reason === 'max-hold' || reason === 'shutdown') return reason;
  if (section.shortened) return 'a shorter extend';
  if (!section.autoRenew && claim <= at + ms(REPORT_SLACK_MS)) return 'its lease ran out';
  if (section.remaining < ttl / 3) return 'a lease granted with little left';
  // Its own removal, or one of the lease it took over (a hand-off after the removal is judged
  // as such by removal-checks.ts).
  const origin = history.grantedFrom(section);
  const removed = history.removals.some(
    (r) =>
      (r.keys === undefined || r.keys.some((k) => section.keys.includes(k))) &&
      origin < BigInt(r.to) &&
      BigInt(r.from) <= at + ms(REPORT_SLACK_MS),
  );
  if (removed) return 'an outside removal';
  const from = claim - ms(ttl) - ms(JUDGED_STALL_MS);
  if (history.faulted(svc, from, at)) return 'a fault';
  if (history.acl.some((w) => w.from <= at && from <= w.to)) return 'a revoked grant';
  // A renewal goes out a third of the ttl in, and has the rest to come back.
  const stalled = history.trafficStalled(svc, from, at);
  if (stalled >= Math.min(ttl / 4, 100)) return `a stall of ${Math.round(stalled)} ms`;
  return undefined;
}

/** Leases lost with nothing in the run to blame: renewal failed the holder. */
function lostWithoutBlame(history: History): string[] {
  const found: string[] = [];
  for (const section of history.sections.values()) {
    if (section.svc === FOREIGN) continue;
    let at: bigint | undefined;
    let reason = section.lostReason;
    if (section.abortedAt !== undefined) at = BigInt(section.abortedAt);
    else {
      at = reportedAt(history, section);
      const call = history.outcomesOf(section.id).find((o) => o.result === 'lost');
      reason = call?.reason ?? section.released;
    }
    if (at === undefined || reason === undefined) continue;
    if (blame(history, section, at, reason) !== undefined) continue;
    const left = Number(BigInt(section.deadline) - at) / 1e6;
    // The cause, where the checker sees it: the lease came by local hand-offs from a holder
    // that did not renew, and ran out at that holder's deadline.
    const first = history.originOf(section);
    const cause =
      first !== section && !first.autoRenew && section.autoRenew && left < REPORT_SLACK_MS
        ? ` (${NOT_RENEWED_HAND_OFF}, ${first.id})`
        : '';
    found.push(
      `${section.id} lost its lease on [${section.keys}] (${reason}) at ${history.at(at)}, its own deadline ${left >= 0 ? `${Math.round(left)} ms ahead` : `${Math.round(-left)} ms past`}, with nothing to blame: no fault, outside move, stall or shorter extend${cause}`,
    );
  }
  for (const bulk of history.bulks) {
    const keys = bulk.losses.map((loss) => loss.key);
    for (const loss of bulk.losses) {
      const as: SectionRecord = {
        id: `${bulk.id}:${loss.key}`, svc: bulk.svc, keys: [loss.key], kind: { type: 'mutex' },
        token: loss.key, enter: bulk.held, deadline: loss.claim, ttl: bulk.ttl, autoRenew: true,
        remaining: bulk.ttl,
      }; // prettier-ignore
      if (blame(history, as, BigInt(loss.at), loss.reason) !== undefined) continue;
      found.push(
        `${bulk.id} (${bulk.count} locks, ttl ${bulk.ttl}) lost ${keys.length} of them, first "${loss.key}" (${loss.reason}) at ${history.at(loss.at)}, with nothing to blame: no fault, outside move or stall`,
      );
      break;
    }
    for (const quiet of bulk.silent) {
      if (quiet.result === 'failed') continue;
      const [claim, at] = [BigInt(quiet.claim), BigInt(quiet.at)];
      if (claim + ms(TURN_MS) >= at || history.loopStalled(bulk.svc, claim, at) >= JUDGED_STALL_MS)
        continue;
      found.push(
        `${bulk.id}: "${quiet.key}" ran out by its own deadline at ${history.at(claim)}, its signal never aborted, and its release at ${history.at(at)} answered '${quiet.result}': a lost lease must be reported before its holder's next store call`,
      );
      break;
    }
  }
  return found;
}

/**
 * A local hand-off's recipient starts with a lease its rules allow: more than half its own
 * lease (so that its first renewal lands in time), never more than its own ttl or `maxHold`.
 */
function handOffTiming(history: History): string[] {
  const found: string[] = [];
  for (const section of history.sections.values()) {
    if (section.svc === FOREIGN) continue;
    const previous = history.handedOffBy(section);
    if (!previous?.leave) continue;
    const own = Math.min(section.ttl, section.maxHold ?? Infinity);
    const [from, to] = [BigInt(previous.leave) - ms(JUDGED_STALL_MS), BigInt(section.enter)];
    if (history.faulted(section.svc, from, to) || history.frozen(section.svc, from, to)) continue;
    const slack = ROUNDING_MS + history.trafficStalled(section.svc, from, to);
    const left = section.remaining;
    if (left < own / 2 - slack || left > own + ROUNDING_MS)
      found.push(
        `${section.id} took over ${previous.id}'s lease by a local hand-off with ${Math.round(left)} ms left, where its own lease is ${own} ms: a hand-off passes more than half, and no more than all, of the recipient's lease`,
      );
  }
  return found;
}

/** A lease that ran out while its loop was held up is reported within a turn of the stall's end. */
function stallReports(history: History, at: bigint): string[] {
  const found: string[] = [];
  for (const stall of history.stalls) {
    if (stall.store || (!stall.injected && stall.lagMs < JUDGED_STALL_MS)) continue;
    const [from, to] = [BigInt(stall.from), BigInt(stall.to)];
    for (const section of history.sections.values()) {
      if (section.svc === FOREIGN) continue;
      const mine = stall.svc === undefined ? history.isLocal(section.svc) : stall.svc === section.svc; // prettier-ignore
      const claim = BigInt(section.deadline);
      // Lost for sure only if Redis could free the key before the loop came back.
      if (!mine || claim < from || claim + ms(leaseMargin(section.ttl) + REPORT_SLACK_MS) > to)
        continue;
      const told = toldEnd(section);
      if (told !== undefined && told <= to) continue;
      if (history.frozen(section.svc, from, to + ms(TURN_MS))) continue;
      // A stall right after this one delays the report as much.
      const after = history.loopStalled(section.svc, to + 1n, to + ms(TURN_MS));
      const bound = to + ms(TURN_MS + (after >= leaseMargin(section.ttl) - MEASURE_MS ? after : 0));
      const reported = reportedAt(history, section);
      if (reported !== undefined ? reported <= bound : at <= bound) continue;
      // Its code left in time: its release is its next store call, and reports when answered.
      if (reported !== undefined && told !== undefined && told <= bound) continue;
      found.push(
        `${section.id}'s lease ran out by its own clock at ${history.at(claim)}, during a stall of its loop (${history.at(from)}–${history.at(to)}), and was reported ${reported === undefined ? 'never' : `only at ${history.at(reported)}`}: a lost lease must be reported within a loop turn of the stall's end`,
      );
    }
  }
  return found;
}

/** A lock with `maxHold` is given up by then: its holder is told, renewal or not. */
function heldPastMaxHold(history: History, at: bigint): string[] {
  const found: string[] = [];
  for (const section of history.sections.values()) {
    if (section.svc === FOREIGN || section.maxHold === undefined) continue;
    const enter = BigInt(section.enter);
    const bound = enter + ms(section.maxHold + REPORT_SLACK_MS);
    const told = toldEnd(section);
    if (told !== undefined && told <= bound) continue;
    if (history.frozen(section.svc, enter, told ?? bound)) continue;
    const until = told ?? at;
    if (until <= bound) continue;
    const late = history.loopStalled(section.svc, bound - ms(REPORT_SLACK_MS), until);
    if (until <= bound + ms(late)) continue;
    found.push(
      `${section.id} held [${section.keys}] from ${history.at(enter)} with maxHold ${section.maxHold} ms, and was not told to stop by ${history.at(bound)}: a lock is held past its maxHold`,
    );
  }
  return found;
}

export function leaseViolations(history: History, at: bigint): string[] {
  return [
    ...heldPastMaxHold(history, at),
    ...auditViolations(history),
    ...lostWithoutBlame(history),
    ...handOffTiming(history),
    ...stallReports(history, at),
  ];
}
