import type { Contender } from '../contenders/index.js';

/** Numbers the keys, so that no two locks of a probe process ever share one. */
let serial = 0;

/**
 * `callers` workers take and release fresh keys on `contender`, one lock after another, until
 * `ms` have passed: the uncontended loop of the probes (the bench's own is scenario 1).
 * Returns the cycles done.
 */
export async function cycleUncontended(
  contender: Contender,
  callers: number,
  ms: number,
  keyPrefix: string,
): Promise<number> {
  const deadline = performance.now() + ms;
  let cycles = 0;
  const caller = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const held = await contender.acquire(`${keyPrefix}:${process.pid}:${serial++}`, {
        ttl: 30_000,
        wait: 10_000,
      });
      await held!.release();
      cycles++;
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  return cycles;
}
