import type { Contender } from './contender.js';

/** A "lock" that never excludes anyone: the overlap detector must catch it every run. */
export function createNoopLock(): Contender {
  return {
    name: 'no-op lock',
    settings: 'grants every request at once',
    acquire: async () => ({ release: async () => undefined }),
    close: async () => undefined,
  };
}
