import { LockBusyError, LockService } from '../../dist/index.js';
import { connect, quit } from './connect.js';
import type { Contender } from './contender.js';

/** What the contender takes from a build of the library: the repo's `dist`, or a copy of one. */
export interface LibraryBuild {
  readonly LockService: typeof LockService;
  readonly LockBusyError: typeof LockBusyError;
}

/**
 * This library through its public face, `LockService`, on one ioredis connection (plus the
 * subscriber connection it duplicates for release notifications). Built directly rather than
 * through Nest DI: tsx emits no decorator metadata. Default module options in every cell.
 * `build` lets a probe measure another copy of `dist` (see `probes/builds-apart.ts`).
 */
export async function createLibrary(
  url: string,
  build: LibraryBuild = { LockService, LockBusyError },
  name = 'library',
): Promise<Contender> {
  const client = await connect(url);
  const service = new build.LockService({ redis: client });
  await service.onModuleInit();
  return {
    name,
    settings: 'LockService defaults (ttl/wait given per cell; release notifications)',
    async acquire(key, { ttl, wait, signal }) {
      try {
        const lock = await service.acquire(key, { ttl, wait, signal });
        return { release: async () => void (await lock.release()) };
      } catch (error) {
        if (error instanceof build.LockBusyError || signal?.aborted) return undefined;
        throw error;
      }
    },
    async close() {
      await service.onApplicationShutdown();
      await quit(client);
    },
  };
}
