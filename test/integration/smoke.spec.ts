import { Redis } from 'ioredis';
import { RedisServer } from '../harness/redis-server.js';
import { createTestEngine } from '../harness/test-engine.js';

describe('smoke', () => {
  let server: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    server = await RedisServer.start();
    client = server.client();
  });
  afterAll(async () => {
    await client.quit();
    await server.stop();
  });

  it('acquires and releases', async () => {
    const engine = createTestEngine(client);
    const lock = await engine.acquire('a');
    expect(await client.get('lock:a')).toBe(lock.token);
    expect(await lock.release()).toBe('released');
    expect(await client.exists('lock:a')).toBe(0);
    await engine.close();
  });
});
