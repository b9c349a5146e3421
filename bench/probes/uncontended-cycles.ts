import type { AcquireOptions, Contender } from '../contenders/index.js';

/** The library's defaults; no key is ever busy here. */
const OPTIONS: AcquireOptions = { ttl: 30_000, wait: 10_000 };

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
      const held = await contender.acquire(`${keyPrefix}:${process.pid}:${serial++}`, OPTIONS);
      await held!.release();
      cycles++;
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  return cycles;
}

/** The same loop, `cyclesEach` locks per worker instead of a time: a block of fixed work. */
export async function cycleBlock(
  contender: Contender,
  callers: number,
  cyclesEach: number,
  keyPrefix: string,
): Promise<void> {
  const caller = async (): Promise<void> => {
    for (let i = 0; i < cyclesEach; i++) {
      const held = await contender.acquire(`${keyPrefix}:${process.pid}:${serial++}`, OPTIONS);
      await held!.release();
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
}
