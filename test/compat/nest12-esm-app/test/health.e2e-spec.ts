import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockModule, LockService } from 'nestjs-distributed-lock';
import { LockHealthIndicator } from 'nestjs-distributed-lock/health';

/** Runs against the Redis at REDIS_URL, as a user the test makes there. */
describe('LockHealthIndicator on terminus 12 (e2e)', () => {
  it('is degraded, not down, when only fencing is refused; down when strict', async () => {
    const redisUrl = process.env.REDIS_URL!;
    const admin = new Redis(redisUrl);
    // A user with every command but TIME, which only fences need.
    await admin.call(
      'ACL',
      'SETUSER',
      'nofence12',
      'on',
      '>pw',
      '~*',
      '&*',
      '+@all',
      '-time',
    );
    const user = `redis://nofence12:pw@${new URL(redisUrl).host}`;
    const moduleRef = await Test.createTestingModule({
      imports: [
        TerminusModule,
        LockModule.forRoot({ redis: user, logger: false }),
      ],
      providers: [LockHealthIndicator],
    }).compile();
    const app = await moduleRef.init();
    try {
      const locks = app.get(LockService);
      await expect(
        locks.acquire('fenced', { fencing: true }),
      ).rejects.toMatchObject({
        code: 'LOCK_STORE_REFUSED',
        refused: 'time',
      });
      await (await locks.acquire('plain')).release();
      const health = app.get(LockHealthIndicator);
      expect((await health.isHealthy('locks')).locks).toMatchObject({
        status: 'degraded',
        refused: ['permission: time'],
      });
      const strict = await health.isHealthy('locks', { strict: true });
      expect(strict.locks.status).toBe('down');
    } finally {
      await app.close();
      await admin.call('ACL', 'DELUSER', 'nofence12');
      admin.disconnect();
    }
  });
});
