/**
 * Reproduction (fails today): inside the stream of an Observable-returning locked method, a call
 * to another method locked on the same key is not reentrant. `currentLock()` is only set while
 * the method body runs (`engine.runHolding(held, keys, invoke)` in
 * lib/decorators/locked-method.runner.ts); the returned Observable is subscribed outside that
 * context, so work done by the stream itself (defer, switchMap to a promise) runs without the
 * lock in its async context, waits for its own lock and fails with LockBusyError after `wait`.
 * Run: NODE_OPTIONS=--experimental-vm-modules npx jest --selectProjects integration --testMatch '<rootDir>/test/repro/*.repro.ts'
 */
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { defer, firstValueFrom, Observable } from 'rxjs';
import { currentLock, DistributedLock, LockModule } from '../../lib/index.js';
import { RedisServer } from '../harness/redis-server.js';

@Injectable()
class Reports {
  @DistributedLock('report:{0}', { wait: 500 })
  stream(id: string): Observable<string | undefined> {
    return defer(() => this.render(id));
  }

  @DistributedLock('report:{0}', { wait: 500 })
  async render(_id: string): Promise<string | undefined> {
    return currentLock()?.key;
  }
}

it('lets the stream of a locked Observable method re-enter its own lock', async () => {
  const redis = await RedisServer.start();
  @Module({ imports: [LockModule.forRoot({ redis: redis.url })], providers: [Reports] })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    await expect(firstValueFrom(app.get(Reports).stream('r1'))).resolves.toBe('report:r1');
  } finally {
    await app.close();
    await redis.stop();
  }
});
