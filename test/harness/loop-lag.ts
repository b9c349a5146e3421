import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Watches this process's event-loop delay until `stop()`, which returns the worst delay in ms.
 * Time budgets add it, so a loaded machine that runs our timers late does not fail a test,
 * while a library that is late on an idle machine still does.
 */
export function loopLag(): { stop(): number } {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  return {
    stop: () => {
      histogram.disable();
      return histogram.max / 1e6;
    },
  };
}
