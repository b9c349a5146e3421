/**
 * Everything one run recorded: the services' sections, call outcomes and audit findings, and
 * the faults the run injected, each with the window in which it may excuse a failed call.
 */
import {
  MS,
  now,
  type OutcomeRecord,
  type SectionRecord,
  type ServiceReport,
  type ViolationRecord,
} from './model-records.js';

export interface FaultWindow {
  readonly kind: 'delay' | 'drop' | 'restart' | 'kill' | 'pause';
  /** The service it hits; undefined for the whole store. */
  readonly svc?: number;
  readonly from: bigint;
  to: bigint;
}

/**
 * A store call may fail for this long after a fault ends: its `storeTimeout` (5 s) plus a
 * reconnect (ioredis retries within 2 s here).
 */
export const FAULT_TAIL = 7_500n * MS;

export class History {
  readonly sections = new Map<string, SectionRecord>();
  readonly outcomes: OutcomeRecord[] = [];
  readonly violations: string[] = [];
  readonly faults: FaultWindow[] = [];
  /** Sections entering before `until` lost their lease to a restart at `from`. */
  readonly amnesties: { from: bigint; until: bigint }[] = [];
  readonly started = now();

  ingest(report: ServiceReport): void {
    if (report.type === 'section') this.sections.set(report.section.id, { ...report.section });
    else if (report.type === 'outcome') this.outcomes.push(report.outcome);
    else if (!this.pausedThen(report.violation)) {
      this.violations.push(`s${report.violation.svc}: ${report.violation.what}`);
    }
  }

  fault(kind: FaultWindow['kind'], svc: number | undefined, forMs = 0): FaultWindow {
    const from = now();
    const window = { kind, svc, from, to: from + BigInt(Math.round(forMs)) * MS };
    this.faults.push(window);
    return window;
  }

  /** Whether a store failure of `svc` during [start, end] may come from an injected fault. */
  faulted(svc: number, start: bigint, end: bigint): boolean {
    return this.faults.some(
      (f) => (f.svc === undefined || f.svc === svc) && f.from <= end && start <= f.to + FAULT_TAIL,
    );
  }

  /** Whether any fault, on any service, was on (or in its tail) during [start, end]. */
  anyFault(start: bigint, end: bigint): boolean {
    return this.faults.some((f) => f.from <= end && start <= f.to + FAULT_TAIL);
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
