/** Work done by a locked stream itself (defer, switchMap) runs in the lock's context, so nested calls on the same key are reentrant. */
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
