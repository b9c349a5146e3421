import { LockBusyError, LockService, type LockOptions } from '../../dist/index.js';
import { openConnection } from './client-connections.js';
import { PLAIN_IOREDIS } from './connect.js';
import type { BenchClient, Contender } from './contender.js';

/**
 * This library through its public face, `LockService`, on one connection of `client` (plus the
 * subscriber connection its adapter makes for release notifications). Built directly rather
 * than through Nest DI: tsx emits no decorator metadata. Default module options in every cell;
 * `kind` (a semaphore's `limit`, or a read-write `mode`) goes with every acquire.
 */
export async function createLibrary(
  url: string,
  kind: Pick<LockOptions, 'limit' | 'mode'> = {},
  name = 'library',
  client: BenchClient = 'ioredis',
): Promise<Contender> {
  const connection = await openConnection(client, url);
  const service = new LockService({ redis: connection.client });
  await service.onModuleInit();
  const given = Object.keys(kind).length > 0 ? `, ${JSON.stringify(kind)}` : '';
  const plain =
    client === 'ioredis' && PLAIN_IOREDIS.length > 0
      ? `; plain ioredis: ${PLAIN_IOREDIS.join(', ')}`
      : '';
  return {
    name,
    settings: `LockService defaults on a ${client} client (ttl/wait given per cell; release notifications)${given}${plain}`,
    async acquire(key, { ttl, wait, signal }) {
      try {
        const lock = await service.acquire(key, { ...kind, ttl, wait, signal });
        return { release: async () => void (await lock.release()) };
      } catch (error) {
        if (error instanceof LockBusyError || signal?.aborted) return undefined;
        throw error;
      }
    },
    async close() {
      await service.onApplicationShutdown();
      await connection.close();
    },
  };
}
