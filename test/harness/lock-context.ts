import { Module, type INestApplicationContext, type Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Redis } from 'ioredis';
import { LockModule } from '../../lib/index.js';
import { RedisServer } from './redis-server.js';

/** An application context of `LockModule.forRoot` and the test's providers, on its own Redis. */
export interface LockContext {
  readonly app: INestApplicationContext;
  /** The test's own connection to that Redis. */
  readonly client: Redis;
}

/**
 * Starts a redis-server and an application context of `LockModule` plus `providers` on it, runs
 * `body`, then closes the context, the connection and the server, whatever `body` did.
 */
export async function withLockContext(
  providers: Provider[],
  body: (context: LockContext) => Promise<void>,
): Promise<void> {
  const redis = await RedisServer.start();
  try {
    @Module({ imports: [LockModule.forRoot({ redis: redis.url })], providers })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    const client = redis.client();
    try {
      await body({ app, client });
    } finally {
      await app.close();
      await client.quit();
    }
  } finally {
    await redis.stop();
  }
}
