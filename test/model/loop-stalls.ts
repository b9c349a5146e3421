/**
 * Measures how long a process's event loop was held up, as the invariants' excuses need it: a
 * timer can fire only when the loop is free, so a holder whose loop stalled past its lease's
 * margin is excused by measurement, never by guess. One per process (the checker's, and each
 * child service's).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { now, type StallRecord } from './model-records.js';

/** Each window's worst delay is read this often; a stall lies within its window. */
const WINDOW_MS = 20;
/** Delays under this are the loop's ordinary jitter: not reported. */
const REPORTED_MS = 5;

export class LoopStalls {
  private readonly delay = monitorEventLoopDelay({ resolution: 2 });
  private readonly timer: NodeJS.Timeout;
  private windowStart = now();
  /** The worst delay seen since this monitor started, in ms. */
  worstMs = 0;

  constructor(svc: number | undefined, report: (stall: StallRecord) => void) {
    this.delay.enable();
    this.timer = setInterval(() => {
      const at = now();
      const lagMs = this.delay.max / 1e6;
      this.worstMs = Math.max(this.worstMs, lagMs);
      // The delay was somewhere in this window: the whole window is its place, conservatively.
      if (lagMs >= REPORTED_MS) {
        report({ svc, from: String(this.windowStart), to: String(at), lagMs, injected: false });
      }
      this.delay.reset();
      this.windowStart = at;
    }, WINDOW_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.delay.disable();
  }
}
