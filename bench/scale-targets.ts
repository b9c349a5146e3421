import type { Figures } from './aggregate.js';
import type { ScenarioResult } from './results.js';
import type { TargetCheck } from './targets.js';

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
  const held = library(7, 1);
  if (held) {
    add(
      7,
      'held: no command ≥ 2 ms (SLOWLOG)',
      `${held.commandsOver2ms} (slowest ${f(held.slowestCommandUs, 0)} µs)`,
      held.commandsOver2ms === 0,
    );
    add(7, 'held: event-loop lag p99 ≤ 20 ms', `${f(held.lagP99, 1)} ms`, held.lagP99 <= 20);
    add(
      7,
      'held: heap ≤ 1 KB per lock, no growth',
      `${f(held.heapPerLockB, 0)} B, growth ${f(held.heapGrowthPerLockB, 0)} B per lock`,
      // Growth: under 5% of what a lock takes, i.e. GC noise, not a leak.
      held.heapPerLockB <= 1024 && held.heapGrowthPerLockB <= 0.05 * held.heapPerLockB,
    );
    add(7, "held: neighbour's PING p99 ≤ 2 ms", `${f(held.pingP99)} ms`, held.pingP99 <= 2);
    add(7, 'held: no lock lost', `${held.lost}`, held.lost === 0);
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
    add(9, 'holder sets: no command ≥ 2 ms', `${over} (slowest ${f(slowest, 0)} µs)`, over === 0);
  }
  return checks;
}
