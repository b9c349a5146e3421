/**
 * One run's real system: the backend, 2–4 lock services, and the history they report into.
 * Applies each op, injects faults, and checks every invariant after each step.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Backend } from './model-backend.js';
import {
  exclusionViolations,
  fenceViolations,
  outcomeViolations,
  refusalViolations,
} from './model-checks.js';
import { History } from './model-history.js';
import { livenessViolations } from './model-liveness.js';
import type { Op, RunSetup, ServiceSetup } from './model-ops.js';
import { MS, now, type ServiceReport } from './model-records.js';
import type { ServiceHandle } from './local-service.js';
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

export class World {
  readonly history = new History();
  readonly dead = new Set<number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly lag = monitorEventLoopDelay({ resolution: 10 });

  private constructor(
    private readonly backend: Backend,
    readonly setup: RunSetup,
    readonly services: ServiceHandle[],
  ) {
    this.lag.enable();
  }

  static async open(backend: Backend, setup: RunSetup, factory: ServiceFactory): Promise<World> {
    await backend.beginRun(setup.services.length);
    const world = new World(backend, setup, []);
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
        return this.delay(op.svc, op.ms, op.forMs);
      case 'drop':
        this.history.fault('drop', undefined);
        await this.backend.drop();
        break;
      case 'restart':
        await this.restart();
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
      default:
        if (!this.dead.has(op.svc)) this.services[op.svc]!.run(op);
    }
    await sleep(STEP_MS);
  }

  /** Every invariant that can be judged now; throws with all that fail. */
  async check(final = false): Promise<void> {
    await Promise.all(this.services.map((service, svc) => !this.dead.has(svc) && service.audit()));
    const forever = await this.backend.keysWithoutExpiry().catch(() => []);
    const at = now();
    const found = [
      ...this.history.violations,
      ...forever.map((key) => `key "${key}" has no expiry (PTTL -1)`),
      ...exclusionViolations(this.history, at),
      ...fenceViolations(this.history),
      ...outcomeViolations(this.history),
      ...refusalViolations(this.history, at),
      ...(final
        ? livenessViolations(this.history, this.setup, this.lagMs(), this.backend.name !== 'memory')
        : []),
    ];
    if (found.length > 0)
      throw new Error(`invariant broken:\n  ${[...new Set(found)].join('\n  ')}`);
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
    return (await Promise.all(live.map((service) => service.busy()))).some(Boolean);
  }

  /** Closes every service, then the run's side of the backend; never throws. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    for (const svc of this.services.keys()) this.backend.setDelay(svc, 0);
    await Promise.all(this.services.map((service) => service.close(0).catch(() => undefined)));
    await this.backend.endRun().catch(() => undefined);
    this.lag.disable();
  }

  /** The worst event-loop stall seen in this process, in ms (for the liveness bounds). */
  lagMs(): number {
    return this.lag.max / 1e6;
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

  private async delay(svc: number, ms: number, forMs: number): Promise<void> {
    this.history.fault('delay', svc, forMs + ms);
    this.backend.setDelay(svc, ms);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.backend.setDelay(svc, 0);
    }, forMs);
    this.timers.add(timer);
  }

  /**
   * A restart empties Redis: every lease live then is gone without its holder knowing, which is
   * the documented limit of a Redis without persistence. Sections entering until the longest of
   * those leases would have ended (plus a second) are excused from exclusion and audits.
   */
  private async restart(): Promise<void> {
    const window = this.history.fault('restart', undefined);
    await this.backend.restart();
    window.to = now();
    const open = [...this.history.sections.values()].filter((s) => s.leave === undefined);
    const longest = Math.max(0, ...open.map((s) => s.ttl));
    const until = window.to + BigInt(longest + 1_000) * MS;
    this.history.amnesties.push({ from: window.from, until });
    for (const service of this.services) service.excuseUntil(until);
  }
}
