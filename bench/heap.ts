import { sleep } from './stats.js';

const gc = (globalThis as { gc?: () => void }).gc;

/** True when `--expose-gc` lets heap figures be taken after a full collection. */
export const canCollect = gc !== undefined;

/** A full GC (two passes, with a turn of the event loop between). */
export async function collectGarbage(): Promise<void> {
  // Weak refs and finalizers settle between the passes.
  gc?.();
  await sleep(50);
  gc?.();
}

/** Heap in use after a full GC. */
export async function heapUsed(): Promise<number> {
  await collectGarbage();
  return process.memoryUsage().heapUsed;
}
