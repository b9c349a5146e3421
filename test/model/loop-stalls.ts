/**
 * Measures how long a process's event loop was held up, as the invariants' excuses need it: a
 * timer can fire only when the loop is free, so a holder whose loop stalled past its lease's
 * margin is excused by measurement, never by guess. One per process (the checker's, and each
 * child service's).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { MS, now, type StallRecord } from './model-records.js';

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
      // The monitor may log a stall in the window after the one it happened in (this timer
      // and its own fire in either order once the loop is free): it ended within the last two
      // windows, and lasted `lagMs`.
      if (lagMs >= REPORTED_MS) {
        const from = this.windowStart - BigInt(Math.ceil(lagMs + WINDOW_MS)) * MS;
        report({ svc, from: String(from), to: String(at), lagMs, injected: false });
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
