/**
 * A service's open critical sections: opened when the holder gets its lock, left when its code
 * ends, and sampled often so that each section's claimed deadline stays current. The samples
 * are what make a stopped or killed holder's section end where its lock said it would.
 */
import type { Lock } from '../../lib/engine/lock.interface.js';
import { MS, now, type SectionRecord, type ServiceReport } from './model-records.js';

/** Sample period: far below the shortest renewal period a drawn ttl gives (ttl / 3 ≥ 30 ms). */
const SAMPLE_MS = 10;

export interface OpenSection {
  readonly record: SectionRecord;
  readonly lock: Lock;
  /** Set once the holder has started to release it: an audit must not race the release. */
  releasing: boolean;
}

export class SectionBook {
  readonly open = new Set<OpenSection>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly svc: number,
    private readonly emit: (report: ServiceReport) => void,
  ) {
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  enter(id: string, lock: Lock, ttl: number, minHold?: number): OpenSection {
    const at = now();
    const record: SectionRecord = {
      id,
      svc: this.svc,
      keys: [...lock.keys],
      kind: lock.kind,
      token: lock.token,
      enter: String(at),
      deadline: String(at + BigInt(Math.floor(lock.remainingTime() * 1000)) * (MS / 1000n)),
      fences: lock.fences ? [...lock.fences] : lock.fence !== undefined ? [lock.fence] : undefined,
      minHold,
      ttl,
    };
    const section: OpenSection = { record, lock, releasing: false };
    // The holder's code starts in the same tick the acquire granted the lock: a grant must
    // come with a live lease, or the code runs holding nothing.
    if (!lock.isHeld) {
      const what = `${id} entered its section with a lock already not held (${lock.remainingTime()} ms left)`;
      const violation = { svc: this.svc, what, unlessPausedAt: record.enter };
      this.emit({ type: 'violation', violation });
    }
    this.open.add(section);
    lock.signal.addEventListener('abort', () => this.lost(section), { once: true });
    this.emit({ type: 'section', section: record });
    return section;
  }

  leave(section: OpenSection): void {
    if (!this.open.delete(section)) return;
    section.releasing = true;
    section.record.leave = String(now());
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
      const claim = at + BigInt(Math.floor(section.lock.remainingTime() * 1000)) * (MS / 1000n);
      const moved = claim - BigInt(section.record.deadline);
      if (moved < MS && moved > -MS) continue;
      section.record.deadline = String(claim);
      this.emit({ type: 'section', section: section.record });
    }
  }

  close(): void {
    clearInterval(this.timer);
  }

  private lost(section: OpenSection): void {
    if (section.record.lostAt !== undefined || section.record.leave !== undefined) return;
    section.record.lostAt = String(now());
    this.emit({ type: 'section', section: section.record });
  }
}
