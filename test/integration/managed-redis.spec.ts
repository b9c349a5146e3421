import type { INestApplicationContext } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockHealthIndicator } from '../../lib/health/index.js';
import { LockModule } from '../../lib/index.js';
import { createAclUser, documentedRule, userUrl } from '../harness/acl-rules.js';
import { CapturingLogger } from '../harness/capturing-logger.js';
import { RedisServer } from '../harness/redis-server.js';

/**
 * A managed Redis as the services run it: CONFIG renamed away, and an eviction policy that can
 * drop lock keys. The module must still find the policy (in INFO), and say so when it cannot.
 */
describe('managed Redis: CONFIG disabled', () => {
  let server: RedisServer;
  const apps: INestApplicationContext[] = [];

  beforeAll(async () => {
    server = await RedisServer.start([
      '--rename-command',
      'CONFIG',
      '',
      '--maxmemory-policy',
      'allkeys-lru',
    ]);
    const admin = new Redis({ host: '127.0.0.1', port: server.port });
    const rule = documentedRule('every feature').filter((grant) => grant !== '+info');
    await createAclUser(admin, 'noinfo', 'secret', rule);
    admin.disconnect();
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await server.stop();
  });

  async function start(redis: string, logger: CapturingLogger): Promise<LockHealthIndicator> {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule, LockModule.forRoot({ redis, logger })],
      providers: [LockHealthIndicator],
    }).compile();
    apps.push(await moduleRef.init());
    return moduleRef.get(LockHealthIndicator);
  }

  it('warns at startup of the policy, read from INFO, and health reports it', async () => {
    const logger = new CapturingLogger();
    const health = await start(server.url, logger);

    const warnings = logger.at('warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].text).toContain('maxmemory-policy "allkeys-lru"');
    expect((await health.isHealthy('locks')).locks).toMatchObject({
      status: 'degraded',
      evictionPolicy: 'allkeys-lru',
      warning: expect.stringContaining('allkeys-lru can evict lock keys'),
    });
  });

  it('with INFO denied too, says once that it cannot verify the policy; health says so', async () => {
    const logger = new CapturingLogger();
    const health = await start(userUrl(server.port, 'noinfo', 'secret'), logger);

    // (ioredis's skipped ready check is warned of too: not this test's business.)
    const eviction = logger.at('warn').filter((line) => line.text.includes('eviction'));
    expect(eviction).toHaveLength(1);
    expect(eviction[0].text).toContain(
      'cannot verify the eviction policy; make sure it is noeviction',
    );
    expect(eviction[0].text).toMatch(/INFO memory: NOPERM.*CONFIG GET: ERR unknown command/);
    expect((await health.isHealthy('locks')).locks).toMatchObject({
      status: 'up',
      evictionPolicy: 'unknown',
      warning: expect.stringContaining('cannot verify the eviction policy'),
    });
  });
});
