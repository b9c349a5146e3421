import {
  CLIENTS_OF,
  type BenchClient,
  type Contender,
  type LockContenderName,
  type Tuning,
} from './contender.js';
import { createLibrary } from './library.js';
import { createRaw } from './raw.js';
import { createRedisSemaphore } from './redis-semaphore.js';
import { createRedlock } from './redlock.js';
import { createRedlockUniversal } from './redlock-universal.js';
import { createSesamecareRedlock } from './sesamecare-redlock.js';

export * from './contender.js';
export { createNoopLock } from './noop.js';

/** `name` on `client`, which must be one of the clients it takes (`CLIENTS_OF`). */
export function createContender(
  name: LockContenderName,
  url: string,
  tuning: Tuning,
  client: BenchClient = 'ioredis',
): Promise<Contender> {
  if (!CLIENTS_OF[name].includes(client)) throw new Error(`${name} does not run on ${client}`);
  switch (name) {
    case 'library':
      return createLibrary(url, {}, 'library', client);
    case 'redlock':
      return createRedlock(url, tuning);
    case '@sesamecare-oss/redlock':
      return createSesamecareRedlock(url, tuning);
    case 'redis-semaphore':
      return createRedisSemaphore(url);
    case 'redlock-universal':
      return createRedlockUniversal(url, tuning, client);
    case 'raw':
      return createRaw(url, client);
  }
}

/** The lock contenders `names` on `client`, connected, in the order given. */
export async function createLockContenders(
  names: readonly LockContenderName[],
  url: string,
  tuning: Tuning,
  client: BenchClient = 'ioredis',
): Promise<Contender[]> {
  const contenders: Contender[] = [];
  try {
    for (const name of names) contenders.push(await createContender(name, url, tuning, client));
  } catch (error) {
    await closeAll(contenders);
    throw error;
  }
  return contenders;
}

export async function closeAll(contenders: readonly Contender[]): Promise<void> {
  await Promise.allSettled(contenders.map((contender) => contender.close()));
}
