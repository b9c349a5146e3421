import type { Figures } from './aggregate.js';
import type { ScenarioResult, TargetCheck } from './results.js';

const f = (value: number | undefined, digits = 2): string =>
  value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);

/** The targets of issue 28: scenarios 7 (held locks), 8 (hand-over) and 9 (holder sets). */
export function scaleTargets(scenarios: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const add = (scenario: number, target: string, measured: string, pass: boolean) =>
    checks.push({ scenario, target, measured, pass });
  /** The library's figures in cell `index` of scenario `id`. */
  const library = (id: number, index: number): Figures | undefined =>
    scenarios
      .find((scenario) => scenario.id === id)
      ?.cells[index]?.results.find((result) => result.contender === 'library')?.figures;

  const bulk = library(7, 0);
  if (bulk) {
    add(7, 'bulk acquire ≥ 0.9× raw', `${f(bulk.acquireToRaw)}×`, bulk.acquireToRaw >= 0.9);
    add(7, 'bulk release ≥ 0.9× raw', `${f(bulk.releaseToRaw)}×`, bulk.releaseToRaw >= 0.9);
  }
  for (const [index, label] of [
    [1, 'held, ttl 3 s'],
    [2, 'held, default ttl'],
  ] as const) {
    const held = library(7, index);
    if (held) heldTargets(held, label);
  }
  function heldTargets(held: Figures, label: string): void {
    add(
      7,
      `${label}: no command ≥ 2 ms (SLOWLOG)`,
      `${held.commandsOver2ms} (slowest ${f(held.slowestCommandUs, 0)} µs; machine stalls: ${held.stalls}; host steal: ${f(held.stealMs, 0)} ms)`,
      held.commandsOver2ms === 0,
    );
    add(7, `${label}: event-loop lag p99 ≤ 20 ms`, `${f(held.lagP99, 1)} ms`, held.lagP99 <= 20);
    add(
      7,
      `${label}: heap ≤ 1 KB per lock, no growth`,
      `${f(held.heapPerLockB, 0)} B, growth ${f(held.heapGrowthPerLockB, 0)} B per lock`,
      // Growth: under a tenth of what a lock takes. Renewals in flight when the heap is read
      // (after a full GC) move it by a few MB either way from run to run; a leak would not.
      held.heapPerLockB <= 1024 && held.heapGrowthPerLockB <= 0.1 * held.heapPerLockB,
    );
    add(
      7,
      `${label}: a neighbour's wait for Redis p99 ≤ 2 ms`,
      `${f(held.waitP99)} ms (alone ${f(held.idleWaitP99)} ms; round trip p99 ${f(held.tripP99)} ms, alone ${f(held.idleTripP99)} ms)`,
      held.waitP99 <= 2,
    );
    add(7, `${label}: no lock lost`, `${held.lost}`, held.lost === 0);
  }
  const handOver = library(8, 0);
  if (handOver) {
    add(
      8,
      'hand-over p99 ≤ 10 ms (releases spread over the window)',
      `p50 ${f(handOver.handOverP50)} ms, p99 ${f(handOver.handOverP99)} ms`,
      handOver.handOverP99 <= 10,
    );
    add(
      8,
      'one subscriber connection in the waiting process',
      `${handOver.subscriberConnections} (${handOver.channels} channels)`,
      handOver.subscriberConnections === 1,
    );
  }
  const sets = library(9, 0);
  if (sets) {
    const over = sets.semaphoreOver2ms + sets.readersOver2ms;
    const slowest = Math.max(sets.semaphoreSlowestUs, sets.readersSlowestUs);
    const steal = sets.semaphoreStealMs + sets.readersStealMs;
    const measured = `${over} (slowest ${f(slowest, 0)} µs; host steal: ${f(steal, 0)} ms)`;
    add(9, 'holder sets: no command ≥ 2 ms', measured, over === 0);
  }
  return checks;
}
