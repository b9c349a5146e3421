/**
 * Reproduction (fails today): the Observable return type is read from `design:returntype`,
 * which TypeScript can only emit when `Observable` is imported as a value. With
 * `import type { Observable }` (what `consistent-type-imports` or `verbatimModuleSyntax`
 * produce), the metadata is `Object`, the method is treated as a plain call: it returns a
 * Promise of the Observable and the lock is released before anyone subscribes. Nest's @Sse()
 * awaits that Promise, so the stream runs unlocked, silently.
 * Run: NODE_OPTIONS=--experimental-vm-modules npx jest --selectProjects integration --testMatch '<rootDir>/test/repro/*.repro.ts'
 */
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { isObservable, NEVER, type Observable } from 'rxjs';
import { DistributedLock, LockModule } from '../../lib/index.js';
import { RedisServer } from '../harness/redis-server.js';

@Injectable()
class Feeds {
  @DistributedLock('feed:{0}')
  open(_id: string): Observable<number> {
    return NEVER;
  }
}

it('locks an Observable method per subscription even when Observable is a type-only import', async () => {
  const redis = await RedisServer.start();
  @Module({ imports: [LockModule.forRoot({ redis: redis.url })], providers: [Feeds] })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    expect(isObservable(app.get(Feeds).open('f1'))).toBe(true);
  } finally {
    await app.close();
    await redis.stop();
  }
});
