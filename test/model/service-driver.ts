/**
 * One lock service as a user drives it: runs the ops of a sequence on its engine, in the
 * background, and reports each critical section and each call's end. The same code runs in
 * this process and in a child process (test/fixtures/model-service.ts).
 */
import type { Cluster, Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { currentLock } from '../../lib/engine/hold/held-lock.js';
import { auditHeld } from './held-audit.js';
import type { LoopOp, Op, TakeOp, TakeOptions } from './model-ops.js';
import { BUSY } from './outcome-class.js';
import { decorated, outcomeOf, sleepOr } from './service-calls.js';
import { nowText, type OutcomeRecord, type ServiceReport } from './model-records.js';
import { SectionBook, type OpenSection } from './section-book.js';

/** A lock taken with `acquire`/`tryAcquire`, held until its time is up or a release op. */
interface ManualHold {
  readonly section: OpenSection;
  readonly release: () => void;
}

export class ServiceDriver {
  private readonly book: SectionBook;
  private readonly pending: AbortController[] = [];
  private readonly manual: ManualHold[] = [];
  private readonly running = new Set<Promise<void>>();
  private count = 0;
  /** Sections that entered before this moment were wiped by a Redis restart. */
  private amnestyUntil = 0n;
  private stopping = false;
  private readonly reported = new Set<string>();

  constructor(
    readonly svc: number,
    private readonly engine: LockEngine,
    private readonly probe: Redis | Cluster | undefined,
    private readonly prefix: string,
    private readonly emit: (report: ServiceReport) => void,
  ) {
    this.book = new SectionBook(svc, emit);
  }

  /** Starts `op`; what it starts runs on in the background. */
  run(op: Op): void {
    if (op.type === 'take') this.track(this.take(op, this.nextId()));
    else if (op.type === 'loop') this.track(this.loop(op));
    else if (op.type === 'release')
      this.manual.at(op.slot % Math.max(1, this.manual.length))?.release();
    else if (op.type === 'abort')
      this.pending
        .filter((c) => !c.signal.aborted)
        .at(op.slot)
        ?.abort(new Error('model abort'));
    else if (op.type === 'extend') this.track(this.extend(op.slot, op.ttl));
  }

  excuseUntil(at: bigint): void {
    if (at > this.amnestyUntil) this.amnestyUntil = at;
  }

  async audit(): Promise<void> {
    if (!this.probe) return;
    this.book.sample();
    const excused = (s: OpenSection): boolean => BigInt(s.record.enter) < this.amnestyUntil;
    // One finding per section: the first is what matters.
    const fresh = (s: OpenSection): boolean => excused(s) || this.reported.has(s.record.id);
    for (const { id, what } of await auditHeld(this.probe, this.prefix, this.book.open, fresh)) {
      this.reported.add(id);
      this.emit({ type: 'violation', violation: { svc: this.svc, what } });
    }
  }

  /** Lets running ops end within `graceMs`, then closes the engine (held locks left to expire). */
  async close(graceMs: number): Promise<void> {
    await Promise.race([Promise.all(this.running), sleepOr(graceMs)]);
    this.stopping = true;
    for (const hold of this.manual) hold.release();
    await this.engine.close();
    this.book.close();
  }

  get busy(): boolean {
    return this.running.size > 0;
  }

  private nextId(): string {
    return `s${this.svc}.${++this.count}`;
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.report(`driver failed: ${String(error)}`));
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  private report(what: string): void {
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
        return await this.holdManual(id, lock, op);
      }
      const body = (lock: Lock): Promise<void> => (acquired(), this.section(id, lock, op));
      if (op.api === 'withLock') await this.engine.withLock(op.keys, body, options);
      else await decorated(this.engine, op, options, () => body(currentLock()!));
      done();
    } catch (error) {
      done(error);
    }
  }

  /** The code inside a lock: hold for `holdMs` (stopping when the signal aborts), maybe nest. */
  private async section(id: string, lock: Lock, op: TakeOp): Promise<void> {
    const open = this.book.enter(id, lock, op.opts.ttl ?? 30_000, op.opts.minHold);
    if (op.onAbortTake) this.onAbortTake(lock, op.onAbortTake);
    try {
      if (op.nest) await this.nested(id, op);
      await sleepOr(op.holdMs, lock.signal);
    } finally {
      this.book.leave(open);
    }
  }

  private async nested(id: string, op: TakeOp): Promise<void> {
    // Keys the section already holds are taken reentrantly: the same holder, no new section.
    const same = op.nest!.keys.every((key) => op.keys.includes(key));
    const nest: TakeOp = { ...op, api: 'withLock', keys: op.nest!.keys, opts: op.nest!.opts, holdMs: 20, nest: undefined, onAbortTake: undefined }; // prettier-ignore
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

  private async holdManual(id: string, lock: Lock, op: TakeOp): Promise<void> {
    const open = this.book.enter(id, lock, op.opts.ttl ?? 30_000, op.opts.minHold);
    if (op.onAbortTake) this.onAbortTake(lock, op.onAbortTake);
    const early = new AbortController();
    const hold: ManualHold = { section: open, release: () => early.abort() };
    this.manual.push(hold);
    await sleepOr(op.holdMs, AbortSignal.any([early.signal, lock.signal]));
    this.manual.splice(this.manual.indexOf(hold), 1);
    this.book.leave(open);
    const started = nowText();
    try {
      await lock.release();
      this.outcome(`${id}/release`, 'release', op.keys, op.opts, started);
    } catch (error) {
      this.outcome(`${id}/release`, 'release', op.keys, op.opts, started, error);
    }
  }

  private async extend(slot: number, ttl: number): Promise<void> {
    const open = [...this.book.open].filter((s) => !s.releasing);
    const target = open[slot % Math.max(1, open.length)];
    if (!target) return;
    const started = nowText();
    try {
      await target.lock.extend(ttl);
      this.outcome(`${target.record.id}/extend`, 'extend', target.record.keys, {}, started);
    } catch (error) {
      this.outcome(`${target.record.id}/extend`, 'extend', target.record.keys, {}, started, error);
    }
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
              const open = this.book.enter(id, lock, op.opts.ttl ?? 30_000, op.opts.minHold);
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
  ): void {
    this.emit({
      type: 'outcome',
      outcome: outcomeOf(this.svc, id, call, keys, opts, start, error),
    });
  }
}
