import { createNoopLock } from './contenders/index.js';
import { runHotKeyLoop } from './hot-key-loop.js';
import { countOverlaps } from './sections.js';

/**
 * Proves, every run, that the overlap detector can see an overlap: a "lock" that excludes
 * nobody, on the same loop the hot-key cells use, must show many.
 */
export async function overlapSelfTest(): Promise<{ sections: number; overlaps: number }> {
  const result = await runHotKeyLoop(createNoopLock(), {
    key: 'self-test',
    workers: 16,
    csMs: 1,
    durationMs: 300,
    ttl: 1_000,
  });
  return { sections: result.sections.length, overlaps: countOverlaps(result.sections) };
}
