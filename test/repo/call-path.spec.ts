import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DistributedLock, LockModule } from '../../lib/index.js';
import { useRedisServer } from '../harness/use-redis.js';
import { waitUntil } from '../harness/waits.js';

/**
 * The files of `lib/` whose functions ran during one uncontended call of a decorated method,
 * from `@DistributedLock` to the store's `SET NX PX` and back: V8's precise coverage counts the
 * calls of every function, reset just before the call.
 */
@Injectable()
class Reports {
  @DistributedLock('report:{0}')
  build(id: string): string {
    return `report ${id}`;
  }
}

@Module({})
class CallPathModule {}

/**
 * Every file is one more a newcomer reads to follow a lock: at most 12 (decision 0012).
 */
const MOST_FILES = 12;

describe('one uncontended decorated call', () => {
  const redis = useRedisServer({ clients: false });

  it(`runs code in at most ${MOST_FILES} files of lib/`, async () => {
    const app = await NestFactory.createApplicationContext(
      {
        module: CallPathModule,
        imports: [LockModule.forRoot({ redis: redis.server.url, logger: false })],
        providers: [Reports],
      },
      { logger: false },
    );
    const session = new Session();
    session.connect();
    try {
      const reports = app.get(Reports);
      // Warm: first calls load modules and connect, and the process's subscriber (for forced
      // releases) is connected, as it is for the rest of an app's life.
      for (let i = 0; i < 3; i++) await reports.build(`warm-${i}`);
      const probe = redis.server.client();
      await waitUntil('the forced-release channel subscribed', async () =>
        ((await probe.pubsub('CHANNELS')) as string[]).some((channel) =>
          channel.endsWith('forced'),
        ),
      );
      probe.disconnect();
      await session.post('Profiler.enable');
      await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
      await session.post('Profiler.takePreciseCoverage');
      expect(await reports.build('42')).toBe('report 42');
      const { result } = await session.post('Profiler.takePreciseCoverage');
      await session.post('Profiler.stopPreciseCoverage');
      const files = filesRun(result);
      expect(files.length).toBeGreaterThan(3);
      expect(files.length > MOST_FILES ? files : []).toEqual([]);
    } finally {
      session.disconnect();
      await app.close();
    }
  });
});

type Coverage =
  Awaited<ReturnType<Session['post']>> extends never
    ? never
    : { url: string; functions: { ranges: { count: number }[] }[] }[];

function filesRun(scripts: Coverage): string[] {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return scripts
    .filter(({ url }) => url.includes('/lib/'))
    .filter(({ functions }) => functions.some(({ ranges }) => ranges[0].count > 0))
    .map(({ url }) => relative(root, url.startsWith('file:') ? fileURLToPath(url) : url))
    .filter((path, index, paths) => path.startsWith('lib/') && paths.indexOf(path) === index)
    .sort();
}
