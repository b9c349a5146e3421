/**
 * Everything one run recorded: the services' sections, call outcomes, audit findings and loop
 * stalls, the foreign clients' compares, and the faults and outside moves the run made, each
 * with the window in which it may excuse what it touched.
 */
import {
  FOREIGN,
  MS,
  now,
  OPEN,
  type AuditRecord,
  type BulkRecord,
  type CompareRecord,
  type OutcomeRecord,
  type RemovalRecord,
  type SectionRecord,
  type ServiceReport,
  type StallRecord,
  type ViolationRecord,
} from './model-records.js';

/**
 * Faults between the library and Redis, and the outside moves that touch no lease (a
 * companion key deleted, a grant revoked): each may excuse a slow wait; only the first five
 * may excuse a failed store call (an ACL revoke is judged by acl-checks.ts instead).
 */
export interface FaultWindow {
  readonly kind:
    'delay' | 'drop' | 'restart' | 'kill' | 'pause' | 'stall' | 'acl' | 'companion' | 'removal';
  /** The service it hits; undefined for the whole store. */
  readonly svc?: number;
  readonly from: bigint;
  to: bigint;
}

/** A grant revoked from the services' ACL user, then given back. */
export interface AclWindow {
  readonly command: string;
  readonly from: bigint;
  to: bigint;
}

/**
 * A store call may fail for this long after a fault ends: its `storeTimeout` (5 s) plus a
 * reconnect (ioredis retries within 2 s here).
 */
export const FAULT_TAIL = 7_500n * MS;

/** A stall this long holds a store call past the point where a wait counts it as a failure. */
const STALL_FAILS_CALLS_MS = 100;

const STORE_FAULTS = new Set(['delay', 'drop', 'restart', 'kill', 'pause', 'stall']);

export class History {
  readonly sections = new Map<string, SectionRecord>();
  readonly outcomes: OutcomeRecord[] = [];
  readonly violations: string[] = [];
  readonly faults: FaultWindow[] = [];
  readonly removals: RemovalRecord[] = [];
  readonly stalls: StallRecord[] = [];
  readonly audits: AuditRecord[] = [];
  readonly compares: CompareRecord[] = [];
  readonly bulks: BulkRecord[] = [];
  readonly acl: AclWindow[] = [];
  readonly started = now();
  private readonly outcomesById = new Map<string, OutcomeRecord[]>();
  /** The sections of each token, by id: the first got the grant, later ones were handed off. */
  private readonly byToken = new Map<string, Set<string>>();

  constructor(
    /** Which services run in the checker's own process (they share its loop and its stalls). */
    private readonly local: (svc: number) => boolean = () => true,
  ) {}

  ingest(report: ServiceReport): void {
    switch (report.type) {
      case 'section': {
        const section = { ...report.section };
        this.sections.set(section.id, section);
        const ids = this.byToken.get(section.token) ?? new Set<string>();
        this.byToken.set(section.token, ids.add(section.id));
        return;
      }
      case 'outcome': {
        const same = this.outcomesById.get(report.outcome.id) ?? [];
        this.outcomesById.set(report.outcome.id, [...same, report.outcome]);
        return void this.outcomes.push(report.outcome);
      }
      case 'audit':
        return void this.audits.push(report.audit);
      case 'stall':
        return void this.stalls.push(report.stall);
      case 'removal':
        return this.removalEnded(report.removal);
      case 'bulk':
        return void this.bulks.push(report.bulk);
      case 'compare':
        return void this.compares.push(report.compare);
      default:
        if (!this.pausedThen(report.violation))
          this.violations.push(`s${report.violation.svc}: ${report.violation.what}`);
    }
  }

  /**
   * A move that may remove leases is under way from now (a forced release sent to a service,
   * the admin CLI started): it counts as one, window open, until its answer comes.
   */
  removalStarted(
    kind: RemovalRecord['kind'],
    keys: readonly string[],
    svc?: number,
  ): RemovalRecord {
    const removal: RemovalRecord = { kind, keys, from: String(now()), to: OPEN, ...(svc !== undefined && { svc }) }; // prettier-ignore
    this.removals.push(removal);
    return removal;
  }

  /** A move's answer: it closes the window opened for it, or is a move of its own. */
  private removalEnded(removal: RemovalRecord): void {
    const open = this.removals.find(
      (r) => r.to === OPEN && r.kind === removal.kind && r.svc === removal.svc && String(r.keys) === String(removal.keys), // prettier-ignore
    );
    if (!open) {
      if (removal.released !== false) this.removals.push(removal);
      return;
    }
    if (removal.released === false) this.removals.splice(this.removals.indexOf(open), 1);
    else open.to = removal.to;
  }

  fault(kind: FaultWindow['kind'], svc: number | undefined, forMs = 0): FaultWindow {
    const from = now();
    const window = { kind, svc, from, to: from + BigInt(Math.round(forMs)) * MS };
    this.faults.push(window);
    return window;
  }

  /** The section whose grant gave `section` its lease: itself, unless handed off locally. */
  originOf(section: SectionRecord): SectionRecord {
    let first = section;
    for (const other of this.sameLease(section))
      if (BigInt(other.enter) < BigInt(first.enter)) first = other;
    return first;
  }

  /**
   * The earliest its lease can have been granted: when the call that took it began (its reply
   * may come after an outside move that removed it).
   */
  grantedFrom(section: SectionRecord): bigint {
    const origin = this.originOf(section);
    return BigInt(origin.asked ?? origin.enter);
  }

  /** The outcomes of the calls with this id (a lock's take, `<id>/release`, `<id>/extend`). */
  outcomesOf(id: string): readonly OutcomeRecord[] {
    return this.outcomesById.get(id) ?? [];
  }

  /**
   * What `section`'s lock claimed as of `at`: its last sampled deadline then (its first, before
   * any sample; a foreign holder's, always its deadline).
   */
  claimAt(section: SectionRecord, at: bigint): bigint {
    let claim = BigInt(section.deadline);
    const claims = section.claims;
    if (!claims) return claim;
    claim = BigInt(claims[0]![1]);
    for (const [when, value] of claims) if (BigInt(when) <= at) claim = BigInt(value);
    return claim;
  }

  /** The latest deadline `section` claimed up to `at`. */
  claimUntil(section: SectionRecord, at: bigint): bigint {
    const claims = section.claims;
    if (!claims) return BigInt(section.deadline);
    let claim = BigInt(claims[0]![1]);
    for (const [when, value] of claims) {
      if (BigInt(when) <= at && BigInt(value) > claim) claim = BigInt(value);
    }
    return claim;
  }

  /** The section that took `section`'s lease over from it by a local hand-off, if one did. */
  handedOffTo(section: SectionRecord): SectionRecord | undefined {
    let next: SectionRecord | undefined;
    for (const other of this.sameLease(section)) {
      if (BigInt(other.enter) <= BigInt(section.enter)) continue;
      if (!next || BigInt(other.enter) < BigInt(next.enter)) next = other;
    }
    return next;
  }

  /** The section `section` took its lease over from by a local hand-off, if it did. */
  handedOffBy(section: SectionRecord): SectionRecord | undefined {
    let previous: SectionRecord | undefined;
    for (const other of this.sameLease(section)) {
      if (BigInt(other.enter) >= BigInt(section.enter)) continue;
      if (!previous || BigInt(other.enter) > BigInt(previous.enter)) previous = other;
    }
    return previous;
  }

  /** The other sections of `section`'s token in its process: one lease, handed on. */
  private sameLease(section: SectionRecord): SectionRecord[] {
    const ids = this.byToken.get(section.token) ?? new Set<string>();
    return [...ids]
      .map((id) => this.sections.get(id)!)
      .filter((other) => other !== section && other.svc === section.svc);
  }

  /** Whether a store failure of `svc` during [start, end] may come from an injected fault. */
  faulted(svc: number, start: bigint, end: bigint): boolean {
    const fault = this.faults.some(
      (f) =>
        STORE_FAULTS.has(f.kind) &&
        (f.svc === undefined || f.svc === svc) &&
        f.from <= end &&
        start <= f.to + FAULT_TAIL,
    );
    return fault || this.trafficStalled(svc, start, end + FAULT_TAIL) >= STALL_FAILS_CALLS_MS;
  }

  /** Whether any fault or outside move, on any service, was on (or in its tail) during [start, end]. */
  anyFault(start: bigint, end: bigint): boolean {
    return (
      this.faults.some((f) => f.from <= end && start <= f.to + FAULT_TAIL) ||
      this.removals.some((r) => BigInt(r.from) <= end && start <= BigInt(r.to) + FAULT_TAIL) ||
      this.stalls.some(
        (s) =>
          s.lagMs >= STALL_FAILS_CALLS_MS &&
          BigInt(s.from) <= end &&
          start <= BigInt(s.to) + FAULT_TAIL,
      )
    );
  }

  /**
   * How long `svc`'s traffic with Redis may have been held up during [from, to], in ms: its own
   * loop, the checker's loop (every service reaches Redis through a delay proxy in the
   * checker's process), and Redis itself.
   */
  trafficStalled(svc: number, from: bigint, to: bigint): number {
    return Math.max(
      this.loopStalled(svc, from, to),
      this.loopStalled(FOREIGN, from, to),
      this.storeStalled(from, to),
    );
  }

  /**
   * The longest loop stall measured or injected in `svc`'s process overlapping [from, to], in
   * ms; a service in the checker's process shares the checker's stalls. `svc` FOREIGN (or any
   * negative) is the checker's process.
   */
  loopStalled(svc: number, from: bigint, to: bigint): number {
    const local = this.isLocal(svc);
    let worst = 0;
    for (const s of this.stalls) {
      if (s.store) continue;
      // The checker's process is one loop for all of its services (and its foreign clients).
      const process = s.svc === undefined || this.isLocal(s.svc) ? 'local' : s.svc;
      const mine = local ? process === 'local' : process === svc;
      if (mine && BigInt(s.from) <= to && from <= BigInt(s.to)) worst = Math.max(worst, s.lagMs);
    }
    return worst;
  }

  /** The slowest answer of Redis to the checker's probe overlapping [from, to], in ms. */
  storeStalled(from: bigint, to: bigint): number {
    let worst = 0;
    for (const s of this.stalls)
      if (s.store && BigInt(s.from) <= to && from <= BigInt(s.to)) worst = Math.max(worst, s.lagMs);
    return worst;
  }

  /** Whether `svc` runs in the checker's own process. */
  isLocal(svc: number): boolean {
    return svc < 0 || this.local(svc);
  }

  /** Whether `svc`'s process was stopped (SIGSTOP) or killed during [from, to]. */
  frozen(svc: number, from: bigint, to: bigint): boolean {
    return this.faults.some(
      (f) =>
        (f.kind === 'pause' || f.kind === 'kill') &&
        f.svc === svc &&
        f.from <= to &&
        (f.kind === 'kill' || from <= f.to + 100n * MS),
    );
  }

  /** A process stopped between its grant and its code: the freeze, not the library, to blame. */
  private pausedThen({ svc, unlessPausedAt }: ViolationRecord): boolean {
    if (unlessPausedAt === undefined) return false;
    const at = BigInt(unlessPausedAt);
    return this.faults.some(
      (f) => f.kind === 'pause' && f.svc === svc && f.from <= at && at <= f.to + 100n * MS,
    );
  }

  /** Milliseconds since the run started, for messages. */
  at(time: bigint | string): string {
    return `${(Number(BigInt(time) - this.started) / 1e6) | 0} ms`;
  }
}
