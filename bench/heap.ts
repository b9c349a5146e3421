import { sleep } from './stats.js';

const gc = (globalThis as { gc?: () => void }).gc;

/** True when `--expose-gc` lets heap figures be taken after a full collection. */
export const canCollect = gc !== undefined;

/** Heap in use after a full GC (two passes, with a turn of the event loop between). */
export async function heapUsed(): Promise<number> {
  // Weak refs and finalizers settle between the passes.
  gc?.();
  await sleep(50);
  gc?.();
  return process.memoryUsage().heapUsed;
}
