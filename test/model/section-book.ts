/**
 * A service's open critical sections: opened when the holder gets its lock, left when its code
 * ends, and sampled often so that each section's claimed deadline stays current. The samples
 * are what make a stopped or killed holder's section end where its lock said it would.
 */
import type { Lock } from '../../lib/engine/lock.interface.js';
import type { TakeOptions } from './model-ops.js';
import { detailsOf } from './outcome-class.js';
import { MS, now, type SectionRecord, type ServiceReport } from './model-records.js';

/** Sample period: far below the shortest renewal period a drawn ttl gives (ttl / 3 ≥ 30 ms). */
const SAMPLE_MS = 10;
/** Claims kept per section: the first, and the latest (renewals move it every ttl / 3). */
const CLAIMS_KEPT = 32;
/** The library's default lease, for a take that draws none. */
const DEFAULT_TTL = 30_000;

export interface OpenSection {
  readonly record: SectionRecord;
  readonly lock: Lock;
  /** Set once the holder has started to release it: an audit must not race the release. */
  releasing: boolean;
}

/** `now + ms`, on the records' clock. */
const after = (at: bigint, ms: number): bigint => at + BigInt(Math.floor(ms * 1000)) * (MS / 1000n);

export class SectionBook {
  readonly open = new Set<OpenSection>();
  private readonly timer: NodeJS.Timeout;
  /** Tokens of sections entered here: a token seen again came by a local hand-off. */
  private readonly tokens = new Set<string>();

  constructor(
    private readonly svc: number,
    private readonly emit: (report: ServiceReport) => void,
    /** Hears each section that took over a lease held here before (a local hand-off). */
    private readonly onHandOff: (section: OpenSection) => void = () => undefined,
  ) {
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  /**
   * `keys`: what the holder asked for, which the lock must cover, no more and no less; `asked`:
   * when its call began (the grant can be no older).
   */
  enter(
    id: string,
    lock: Lock,
    keys: readonly string[],
    opts: TakeOptions,
    asked: string,
  ): OpenSection {
    const at = now();
    const remaining = lock.remainingTime();
    const wanted = [...new Set(keys)];
    const record: SectionRecord = {
      id,
      svc: this.svc,
      keys: wanted,
      kind: lock.kind,
      token: lock.token,
      enter: String(at),
      asked,
      deadline: String(after(at, remaining)),
      claims: [[String(at), String(after(at, remaining))]],
      fences: lock.fences ? [...lock.fences] : lock.fence !== undefined ? [lock.fence] : undefined,
      minHold: opts.minHold,
      ttl: opts.ttl ?? DEFAULT_TTL,
      maxHold: opts.maxHold,
      autoRenew: opts.autoRenew ?? true,
      remaining,
    };
    const section: OpenSection = { record, lock, releasing: false };
    if (wanted.length !== lock.keys.length || wanted.some((key) => !lock.keys.includes(key))) {
      const what = `${id} asked for [${wanted}] and entered holding a lock of [${lock.keys}]: the lock does not cover the keys asked for`;
      this.emit({ type: 'violation', violation: { svc: this.svc, what } });
    }
    // The holder's code starts in the same tick the acquire granted the lock: a grant must
    // come with a live lease, or the code runs holding nothing.
    if (!lock.isHeld) {
      const what = `${id} entered its section with a lock already not held (${remaining} ms left)`;
      const violation = { svc: this.svc, what, unlessPausedAt: record.enter };
      this.emit({ type: 'violation', violation });
    }
    this.open.add(section);
    lock.signal.addEventListener('abort', () => this.aborted(section), { once: true });
    this.emit({ type: 'section', section: record });
    const handedOff = this.tokens.has(lock.token);
    this.tokens.add(lock.token);
    if (handedOff) this.onHandOff(section);
    return section;
  }

  leave(section: OpenSection): void {
    if (!this.open.delete(section)) return;
    section.releasing = true;
    section.record.leave = String(now());
    this.emit({ type: 'section', section: section.record });
  }

  /** The release of a section already left answered `result`. */
  released(section: OpenSection, result: string): void {
    section.record.released = result;
    this.emit({ type: 'section', section: section.record });
  }

  /** An extend to less than the lock's ttl goes out: a lease that then runs out is expected. */
  shortened(section: OpenSection): void {
    if (section.record.shortened) return;
    section.record.shortened = true;
    this.emit({ type: 'section', section: section.record });
  }

  /** Updates every open section's claim; marks the ones whose lock says it is gone. */
  sample(): void {
    for (const section of this.open) {
      if (section.record.lostAt !== undefined) continue;
      const at = now();
      if (!section.lock.isHeld) {
        this.lost(section);
        continue;
      }
      const claim = after(at, section.lock.remainingTime());
      const moved = claim - BigInt(section.record.deadline);
      if (moved < MS && moved > -MS) continue;
      section.record.deadline = String(claim);
      const claims = section.record.claims!;
      claims.push([String(at), String(claim)]);
      if (claims.length > CLAIMS_KEPT) claims.splice(1, 1);
      this.emit({ type: 'section', section: section.record });
    }
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** The signal aborted: the holder is told, at this moment, with this reason. */
  private aborted(section: OpenSection): void {
    const { record, lock } = section;
    if (record.abortedAt !== undefined) return;
    record.abortedAt = String(now());
    const { reason, code } = detailsOf(lock.signal.reason);
    record.lostReason = reason ?? code ?? 'unknown';
    this.lost(section);
    this.emit({ type: 'section', section: record });
  }

  private lost(section: OpenSection): void {
    if (section.record.lostAt !== undefined || section.record.leave !== undefined) return;
    section.record.lostAt = String(now());
    this.emit({ type: 'section', section: section.record });
  }
}
