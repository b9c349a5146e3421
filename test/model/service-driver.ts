/**
 * One lock service as a user drives it: runs the ops of a sequence on its engine, in the
 * background, and reports each critical section and each call's end. The same code runs in
 * this process and in a child process (test/fixtures/model-service.ts).
 */
import type { Cluster, Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { currentLock } from '../../lib/engine/hold/held-lock.js';
import { BulkHolds } from './bulk-holds.js';
import { auditHeld } from './held-audit.js';
import type { ExtendOp, LoopOp, Op, StaleOp, TakeOp, TakeOptions } from './model-ops.js';
import { BUSY } from './outcome-class.js';
import { busyWait, decorated, outcomeOf, sleepOr } from './service-calls.js';
import { nowText, type OutcomeRecord, type ServiceReport } from './model-records.js';
import { SectionBook, type OpenSection } from './section-book.js';

/** A lock taken with `acquire`/`tryAcquire`, held until its time is up or a release op. */
interface ManualHold {
  readonly section: OpenSection;
  readonly release: () => void;
}

/** How often an `extend … at N ms left` looks at the lease it waits on. */
const EXTEND_POLL_MS = 2;
/** `extendShort`: a lease a stale holder asks for that ends soon. */
const SHORT_TTL = 50;

export class ServiceDriver {
  private readonly book: SectionBook;
  private readonly bulk: BulkHolds;
  private readonly pending: AbortController[] = [];
  private readonly manual: ManualHold[] = [];
  private readonly running = new Set<Promise<void>>();
  private count = 0;
  private stopping = false;
  private readonly reported = new Set<string>();

  constructor(
    readonly svc: number,
    private readonly engine: LockEngine,
    private readonly probe: Redis | Cluster | undefined,
    private readonly prefix: string,
    private readonly emit: (report: ServiceReport) => void,
  ) {
    // A lease handed on here is looked at in Redis at once: it must still be there.
    this.book = new SectionBook(svc, emit, (section) => void this.auditNow(section));
    this.bulk = new BulkHolds(svc, engine, probe, prefix, emit);
  }

  /**
   * What an app's module does at startup (`LockService.onModuleInit`): registers the process as
   * the owner of its locks, through which its locks hear of a forced release, and checks the
   * store. A store that does not answer yet is no failure here: the app starts all the same.
   */
  async start(): Promise<void> {
    await this.engine.init().catch(() => undefined);
  }

  /** Starts `op`; what it starts runs on in the background. */
  run(op: Op): void {
    switch (op.type) {
      case 'take':
        return this.track(this.take(op, this.nextId()));
      case 'burst':
        for (const take of op.takes) this.track(this.take(take, this.nextId()));
        return;
      case 'loop':
        return this.track(this.loop(op));
      case 'bulk':
        return this.track(this.bulk.run(op, this.nextId()));
      case 'release':
        return this.manual.at(op.slot % Math.max(1, this.manual.length))?.release();
      case 'abort':
        return void this.pending
          .filter((c) => !c.signal.aborted)
          .at(op.slot)
          ?.abort(new Error('model abort'));
      case 'extend':
        return this.track(this.extend(op));
      case 'stall':
        return this.stall(op.ms);
      case 'stale':
        return this.stale(op);
      case 'force':
        return this.track(this.force(op.key));
    }
  }

  async audit(): Promise<void> {
    if (!this.probe) return;
    this.book.sample();
    await this.auditSections(this.book.open);
  }

  /** Lets running ops end within `graceMs`, then closes the engine (held locks left to expire). */
  async close(graceMs: number): Promise<void> {
    await Promise.race([Promise.all(this.running), sleepOr(graceMs)]);
    this.stopping = true;
    this.bulk.stop();
    for (const hold of this.manual) hold.release();
    await this.engine.close();
    this.book.close();
  }

  get busy(): boolean {
    return this.running.size > 0;
  }

  private async auditNow(section: OpenSection): Promise<void> {
    if (this.probe) await this.auditSections([section]);
  }

  private async auditSections(sections: Iterable<OpenSection>): Promise<void> {
    // One finding per section: the first is what matters.
    const skip = (s: OpenSection): boolean => this.reported.has(s.record.id);
    for (const audit of await auditHeld(this.probe!, this.prefix, sections, skip)) {
      if (this.reported.has(audit.section)) continue;
      this.reported.add(audit.section);
      this.emit({ type: 'audit', audit: { svc: this.svc, ...audit } });
    }
  }

  private nextId(): string {
    return `s${this.svc}.${++this.count}`;
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) =>
      this.reportViolation(`driver failed: ${String(error)}`),
    );
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  /** A finding of this service's own (an error nobody handled, a driver that failed). */
  reportViolation(what: string): void {
    this.emit({ type: 'violation', violation: { svc: this.svc, what } });
  }

  private async take(op: TakeOp, id: string): Promise<void> {
    const control = new AbortController();
    this.pending.push(control);
    const options = { ...op.opts, signal: control.signal };
    const started = nowText();
    // Once the lock is held, its acquire can no longer be aborted: off the abortable list.
    const acquired = (): void => {
      const index = this.pending.indexOf(control);
      if (index >= 0) this.pending.splice(index, 1);
    };
    const done = (error?: unknown): void => {
      acquired();
      // tryAcquire never waits, whatever `wait` says.
      const opts = op.api === 'tryAcquire' ? { ...op.opts, wait: 0 } : op.opts;
      this.outcome(id, 'take', op.keys, opts, started, error);
    };
    try {
      if (op.api === 'acquire' || op.api === 'tryAcquire') {
        const lock = await (op.api === 'acquire'
          ? this.engine.acquire(op.keys, options)
          : this.engine.tryAcquire(op.keys, options));
        if (!lock) return done(BUSY);
        done();
        return await this.holdManual(id, lock, op, started);
      }
      const body = (lock: Lock): Promise<void> => (acquired(), this.section(id, lock, op, started));
      if (op.api === 'withLock') await this.engine.withLock(op.keys, body, options);
      else await decorated(this.engine, op, options, () => body(currentLock()!));
      done();
    } catch (error) {
      done(error);
    }
  }

  /** The code inside a lock: hold for `holdMs` (stopping when the signal aborts), maybe nest. */
  private async section(id: string, lock: Lock, op: TakeOp, asked: string): Promise<void> {
    const open = this.book.enter(id, lock, op.keys, op.opts, asked);
    if (op.onAbortTake) this.onAbortTake(lock, op.onAbortTake);
    try {
      if (op.nest) await this.nested(id, op);
      await sleepOr(op.holdMs, op.deaf ? undefined : lock.signal);
    } finally {
      this.book.leave(open);
    }
  }

  private async nested(id: string, op: TakeOp): Promise<void> {
    // Keys the section already holds are taken reentrantly: the same holder, no new section.
    const same = op.nest!.keys.every((key) => op.keys.includes(key));
    const nest: TakeOp = { ...op, api: 'withLock', keys: op.nest!.keys, opts: op.nest!.opts, holdMs: 20, nest: undefined, onAbortTake: undefined, deaf: false }; // prettier-ignore
    if (!same) return this.take(nest, `${id}/nest`);
    // Reentrant: the same holder, so no section of its own.
    await this.engine
      .withLock(op.keys, () => sleepOr(10), op.nest!.opts)
      .catch((error: unknown) => {
        this.outcome(`${id}/reenter`, 'take', op.keys, op.nest!.opts, nowText(), error);
      });
  }

  /** User cleanup in an abort handler that locks another key: runs in a library callback. */
  private onAbortTake(lock: Lock, key: string): void {
    const cleanup = (): void => {
      if (this.stopping) return;
      const op: TakeOp = { type: 'take', svc: this.svc, api: 'withLock', keys: [key], opts: { wait: 1_000 }, holdMs: 50 }; // prettier-ignore
      this.track(this.take(op, `${this.nextId()}(onAbort)`));
    };
    lock.signal.addEventListener('abort', cleanup, { once: true });
  }

  private async holdManual(id: string, lock: Lock, op: TakeOp, asked: string): Promise<void> {
    const open = this.book.enter(id, lock, op.keys, op.opts, asked);
    if (op.onAbortTake) this.onAbortTake(lock, op.onAbortTake);
    const early = new AbortController();
    const hold: ManualHold = { section: open, release: () => early.abort() };
    this.manual.push(hold);
    const stop = op.deaf ? early.signal : AbortSignal.any([early.signal, lock.signal]);
    await sleepOr(op.holdMs, stop);
    this.manual.splice(this.manual.indexOf(hold), 1);
    this.book.leave(open);
    const started = nowText();
    try {
      const result = await lock.release();
      this.book.released(open, result);
      this.outcome(`${id}/release`, 'release', op.keys, op.opts, started, undefined, result);
    } catch (error) {
      this.outcome(`${id}/release`, 'release', op.keys, op.opts, started, error);
    }
  }

  private openAt(slot: number): OpenSection | undefined {
    const open = [...this.book.open].filter((s) => !s.releasing);
    return open[slot % Math.max(1, open.length)];
  }

  private async extend({ slot, ttl, atLeft }: ExtendOp): Promise<void> {
    const target = this.openAt(slot);
    if (!target) return;
    // Near the end of the lease: where a deadline that does not follow the extend shows.
    while (atLeft !== undefined && target.lock.isHeld && target.lock.remainingTime() > atLeft)
      await sleepOr(EXTEND_POLL_MS);
    if (target.releasing) return;
    await this.extendNow(target, ttl);
  }

  /** `extend(ttl)` of an open section, its outcome reported, then its lease audited. */
  private async extendNow(target: OpenSection, ttl: number): Promise<void> {
    const { record, lock } = target;
    const started = nowText();
    if (ttl < record.ttl) this.book.shortened(target);
    try {
      await lock.extend(ttl);
      this.outcome(`${record.id}/extend`, 'extend', record.keys, {}, started);
      await this.auditNow(target);
    } catch (error) {
      this.outcome(`${record.id}/extend`, 'extend', record.keys, {}, started, error);
    }
  }

  /** The loop held by the app's own work: every timer and reply of this process waits. */
  private stall(ms: number): void {
    const from = nowText();
    busyWait(ms);
    this.emit({
      type: 'stall',
      stall: { svc: this.svc, from, to: nowText(), lagMs: ms, injected: true },
    });
  }

  /** A holder that acts as soon as its stalled loop comes back, before any library timer. */
  private stale({ slot, stallMs, act }: StaleOp): void {
    const target = this.openAt(slot);
    this.stall(stallMs);
    if (!target || target.releasing) return;
    if (act !== 'release') return this.track(this.extendNow(target, act === 'extend' ? target.record.ttl : SHORT_TTL)); // prettier-ignore
    // Only a manual hold can be released by the driver; others extend instead.
    const manual = this.manual.find((hold) => hold.section === target);
    if (manual) manual.release();
    else this.track(this.extendNow(target, target.record.ttl));
  }

  /**
   * An operator's `forceRelease` through this service's own LockService. One that failed may
   * still have removed the lock (a script cut short by a refusal, an answer lost): it counts as
   * a removal all the same, unless it found the key free (reported too: it closes the window
   * the checker opened when it sent the op).
   */
  private async force(key: string): Promise<void> {
    const from = nowText();
    let released = true;
    try {
      released = await this.engine.inspections.forceRelease(key);
    } catch (error) {
      this.outcome(`${this.nextId()}/force`, 'release', [key], {}, from, error);
    }
    const removal = { kind: 'forceRelease', keys: [key], from, to: nowText(), svc: this.svc, released } as const; // prettier-ignore
    this.emit({ type: 'removal', removal });
  }

  private async loop(op: LoopOp): Promise<void> {
    const worker = async (): Promise<void> => {
      for (let round = 0; round < op.rounds && !this.stopping; round++) {
        const id = this.nextId();
        const started = nowText();
        try {
          await this.engine.withLock(
            op.key,
            async (lock) => {
              const open = this.book.enter(id, lock, [op.key], op.opts, started);
              await sleepOr(op.holdMs, lock.signal);
              this.book.leave(open);
            },
            op.opts,
          );
          this.outcome(id, 'loop', [op.key], op.opts, started);
        } catch (error) {
          this.outcome(id, 'loop', [op.key], op.opts, started, error);
        }
      }
    };
    await Promise.all(Array.from({ length: op.workers }, worker));
  }

  private outcome(
    id: string,
    call: OutcomeRecord['call'],
    keys: readonly string[],
    opts: TakeOptions,
    start: string,
    error?: unknown,
    released?: string,
  ): void {
    this.emit({
      type: 'outcome',
      outcome: outcomeOf(this.svc, id, call, keys, opts, start, error, released),
    });
  }
}
