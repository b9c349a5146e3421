import type { Contender, LockContenderName, Tuning } from './contender.js';
import { createLibrary } from './library.js';
import { createRaw } from './raw.js';
import { createRedisSemaphore } from './redis-semaphore.js';
import { createRedlock } from './redlock.js';

export * from './contender.js';
export { createNoopLock } from './noop.js';

export function createContender(
  name: LockContenderName,
  url: string,
  tuning: Tuning,
): Promise<Contender> {
  switch (name) {
    case 'library':
      return createLibrary(url);
    case 'redlock':
      return createRedlock(url, tuning);
    case 'redis-semaphore':
      return createRedisSemaphore(url);
    case 'raw':
      return createRaw(url);
  }
}

/** Every lock contender, connected, in the canonical order. */
export async function createLockContenders(
  names: readonly LockContenderName[],
  url: string,
  tuning: Tuning,
): Promise<Contender[]> {
  const contenders: Contender[] = [];
  for (const name of names) contenders.push(await createContender(name, url, tuning));
  return contenders;
}

export async function closeAll(contenders: readonly Contender[]): Promise<void> {
  await Promise.allSettled(contenders.map((contender) => contender.close()));
}
