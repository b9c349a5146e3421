/**
 * One run's real system: the backend, 2–4 lock services, the outside actors, and the history
 * they all report into. Applies each op, injects faults and moves, and checks every invariant
 * after each step.
 */
import type { Backend } from './model-backend.js';
import {
  exclusionViolations,
  fenceViolations,
  outcomeViolations,
  refusalViolations,
} from './model-checks.js';
import { aclViolations } from './acl-checks.js';
import { History } from './model-history.js';
import { leaseViolations } from './lease-checks.js';
import { livenessViolations } from './model-liveness.js';
import { LoopStalls } from './loop-stalls.js';
import type { Op, RunSetup, ServiceSetup } from './model-ops.js';
import { ms, now, nowText, type ServiceReport } from './model-records.js';
import { OutsideMoves } from './outside-moves.js';
import { stackOf } from './outcome-class.js';
import { removalViolations } from './removal-checks.js';
import type { ServiceHandle } from './local-service.js';
import { PREFIX } from './service-engine.js';
import { WORLD_OP_TYPES, type WorldOp } from './world-ops.js';
import { sleep } from '../harness/waits.js';

export type ServiceFactory = (
  svc: number,
  setup: ServiceSetup,
  emit: (report: ServiceReport) => void,
) => Promise<ServiceHandle>;

/** Each step lets what it started get going before the checks look. */
const STEP_MS = 15;
/** Audits run this often during a sleep: between steps, the checks are continuous. */
const AUDIT_EVERY_MS = 25;
/** The longest a run waits at its end for the services' ops to finish (longest hold + wait). */
const DRAIN_MS = 12_000;
/** The probe pings Redis this often; an answer slower than STORE_SLOW_MS is a store stall. */
const PING_EVERY_MS = 25;
const STORE_SLOW_MS = 10;
/** A key without an expiry found this soon after a revoke ended is the revoke's. */
const REVOKE_TAIL_MS = 2_000;

/** Violations whose kind is ignored (a known defect, while a mutant suite scores the others). */
export type ViolationFilter = (line: string) => boolean;

export class World {
  readonly history: History;
  readonly dead = new Set<number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stalls: LoopStalls;
  private readonly moves: OutsideMoves;
  private readonly pinger: NodeJS.Timeout;
  private readonly revokedKeys = new Map<string, string>();

  private constructor(
    private readonly backend: Backend,
    readonly setup: RunSetup,
    readonly services: ServiceHandle[],
    private readonly keep: ViolationFilter,
  ) {
    this.history = new History((svc) => !setup.services[svc]?.child);
    const record = (report: ServiceReport): void => this.history.ingest(report);
    // The checker's own loop: its in-process services and foreign clients share it.
    this.stalls = new LoopStalls(undefined, (stall) => record({ type: 'stall', stall }));
    this.moves = new OutsideMoves(backend, this.history, PREFIX);
    this.pinger = this.pingStore();
    process.on('unhandledRejection', this.unhandled);
  }

  /**
   * A promise rejected with nobody to hear it ends a Node process: a library that leaves one
   * behind (in its own code or a client's) takes the app down. Recorded, not crashed on.
   */
  private readonly unhandled = (reason: unknown): void => {
    this.history.violations.push(
      `unhandled rejection in the checker's process: ${String(reason)}${stackOf(reason)}`,
    );
  };

  static async open(
    backend: Backend,
    setup: RunSetup,
    factory: ServiceFactory,
    keep: ViolationFilter = () => true,
  ): Promise<World> {
    await backend.beginRun(setup.services.length);
    const world = new World(backend, setup, [], keep);
    const emit = (report: ServiceReport): void => world.history.ingest(report);
    // In parallel: a child service takes a second or more to start.
    const started = await Promise.allSettled(
      setup.services.map((service, svc) => factory(svc, service, emit)),
    );
    for (const result of started)
      if (result.status === 'fulfilled') world.services.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) {
      await world.close();
      throw (failed as PromiseRejectedResult).reason;
    }
    return world;
  }

  async apply(op: Op): Promise<void> {
    switch (op.type) {
      case 'sleep':
        return this.sleepAuditing(op.ms);
      case 'delay':
        this.delay(op.svc, op.ms, op.forMs);
        break;
      case 'drop':
        this.history.fault('drop', undefined);
        await this.backend.drop();
        break;
      case 'kill':
        this.history.fault('kill', op.svc);
        this.dead.add(op.svc);
        await this.services[op.svc]!.kill!();
        break;
      case 'pause':
        this.history.fault('pause', op.svc, op.ms);
        await this.services[op.svc]!.pause!(op.ms);
        break;
      case 'burst':
        for (const take of op.takes) this.runIn(take.svc, take);
        if (op.foreign?.length) {
          // After the takes have gone out: the foreign clients come for a key already held.
          await sleep(STEP_MS);
          for (const foreign of op.foreign) await this.moves.apply(foreign);
        }
        break;
      default:
        // A service's own moves (its forced release, its stalls) run in the service; a forced
        // release counts from when it is sent, until its answer comes back. The admin CLI's
        // is a move of the world, in a process of its own.
        if (op.type === 'force' && op.via === 'service') {
          if (this.dead.has(op.svc)) break;
          this.history.removalStarted('forceRelease', [op.key], op.svc);
          this.runIn(op.svc, op);
        } else if (op.type === 'stall') this.runIn(op.svc, op);
        else if (WORLD_OP_TYPES.has(op.type)) await this.moves.apply(op as WorldOp);
        else this.runIn((op as { svc: number }).svc, op);
    }
    await sleep(STEP_MS);
  }

  /** Every invariant that can be judged now; throws with all that fail. */
  async check(final = false): Promise<void> {
    await Promise.all(this.services.map((service, svc) => !this.dead.has(svc) && service.audit()));
    const forever = await this.backend.keysWithoutExpiry().catch(() => []);
    // A turn of the loop first: a timer already due (a lease's deadline) runs before the
    // checks judge what it would have done.
    await sleep(1);
    const at = now();
    const { history, setup } = this;
    const found = [
      ...history.violations,
      ...forever.map((key) => `key "${key}" has no expiry (PTTL -1)${this.revokedLately(key, at)}`),
      ...exclusionViolations(history, at),
      ...fenceViolations(history),
      ...outcomeViolations(history),
      ...refusalViolations(history, at),
      ...removalViolations(history, at),
      ...leaseViolations(history, at),
      ...aclViolations(history),
      ...(final
        ? livenessViolations(history, setup, this.stalls.worstMs, this.backend.name !== 'memory')
        : []),
    ].filter(this.keep);
    if (found.length > 0)
      throw new Error(`invariant broken:\n  ${[...new Set(found)].join('\n  ')}`);
  }

  /**
   * Names a revoke open or just over: a key left without an expiry then was written by a
   * script the revoke cut short (a cause the checker can see, and a kind of its own).
   */
  private revokedLately(key: string, at: bigint): string {
    const recent = this.history.acl.filter((w) => w.to + ms(REVOKE_TAIL_MS) >= at);
    if (recent.length > 0) {
      // Found once under a revoke, the same key stays the revoke's when found again.
      const cause = ` (written while -${recent.map((w) => w.command).join(' -')} was revoked)`;
      if (!this.revokedKeys.has(key)) this.revokedKeys.set(key, cause);
    }
    return this.revokedKeys.get(key) ?? '';
  }

  /** Waits for the services' ops to end (bounded), then judges the whole history. */
  async finish(): Promise<void> {
    const deadline = performance.now() + DRAIN_MS;
    while (performance.now() < deadline && (await this.anyBusy())) {
      await this.sleepAuditing(50);
    }
    await this.check(true);
  }

  private async anyBusy(): Promise<boolean> {
    const live = this.services.filter((_, svc) => !this.dead.has(svc));
    const busy = await Promise.all(live.map((service) => service.busy()));
    return this.moves.busy || busy.some(Boolean);
  }

  /** Closes every service, then the run's side of the backend; never throws. */
  async close(): Promise<void> {
    clearInterval(this.pinger);
    for (const timer of this.timers) clearTimeout(timer);
    await this.moves.close().catch(() => undefined);
    for (const svc of this.services.keys()) this.backend.setDelay(svc, 0);
    await Promise.all(this.services.map((service) => service.close(0).catch(() => undefined)));
    await this.backend.endRun().catch(() => undefined);
    this.stalls.close();
    // Rejections of calls cut short by the services' closing land a turn or two later.
    await sleep(STEP_MS);
    process.off('unhandledRejection', this.unhandled);
  }

  /** Rejections nobody handled while the run closed (calls cut short at shutdown): defects too. */
  closingViolations(before: number): string[] {
    const closing = this.history.violations.slice(before);
    return closing.filter((line) => line.includes('unhandled rejection')).filter(this.keep);
  }

  private runIn(svc: number, op: Op): void {
    if (!this.dead.has(svc)) this.services[svc]?.run(op);
  }

  private async sleepAuditing(ms: number): Promise<void> {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      await sleep(Math.min(AUDIT_EVERY_MS, until - performance.now()));
      await Promise.all(
        this.services.map((service, svc) => !this.dead.has(svc) && service.audit()),
      );
    }
  }

  private delay(svc: number, ms: number, forMs: number): void {
    this.history.fault('delay', svc, forMs + ms);
    this.backend.setDelay(svc, ms);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.backend.setDelay(svc, 0);
    }, forMs);
    this.timers.add(timer);
  }

  /**
   * Redis's own answers, timed: on a machine shared with other work, Redis too can be slow,
   * and a lease lost then is excused by that measurement, not by a guess.
   */
  private pingStore(): NodeJS.Timeout {
    let pending = false;
    const timer = setInterval(() => {
      const probe = this.backend.probe;
      if (!probe || pending) return;
      pending = true;
      const from = now();
      void probe
        .ping()
        .then(() => {
          const lagMs = Number(now() - from) / 1e6;
          const stall = { from: String(from), to: nowText(), lagMs, injected: false, store: true };
          if (lagMs >= STORE_SLOW_MS) this.history.ingest({ type: 'stall', stall });
        })
        .catch(() => undefined)
        .finally(() => (pending = false));
    }, PING_EVERY_MS);
    timer.unref();
    return timer;
  }
}
