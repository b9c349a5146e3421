import { Redis } from 'ioredis';
import { loopLag } from './loop-lag.js';
import { RedisServer } from './redis-server.js';
import { TcpDelayProxy } from './tcp-delay-proxy.js';
import { reportTiming } from './timings.js';
import { errorOf } from './waits.js';

/** Wall time of one PING round trip. */
async function pingMs(client: Redis): Promise<number> {
  const began = performance.now();
  expect(await client.ping()).toBe('PONG');
  return performance.now() - began;
}

describe('TcpDelayProxy', () => {
  let redis: RedisServer;
  let proxy: TcpDelayProxy;
  let client: Redis;

  beforeAll(async () => {
    redis = await RedisServer.start();
    proxy = await TcpDelayProxy.start(redis.port);
    client = new Redis({ host: '127.0.0.1', port: proxy.port, maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
  });

  afterAll(async () => {
    client?.disconnect();
    await proxy?.close();
    await redis?.stop();
  });

  afterEach(() => {
    proxy.setDelay(0);
    proxy.resume();
  });

  it('forwards to Redis quickly with no delay', async () => {
    expect(proxy.port).not.toBe(redis.port);
    await client.set('through-proxy', 'yes');
    const direct = redis.client();
    try {
      expect(await direct.get('through-proxy')).toBe('yes');
    } finally {
      direct.disconnect();
    }
    const lag = loopLag();
    const rtt = await pingMs(client);
    reportTiming('proxied PING, no delay', rtt);
    expect(rtt).toBeLessThan(50 + Math.min(lag.stop(), 100));
  });

  it('delays both directions: a round trip pays the delay twice', async () => {
    proxy.setDelay(100);
    const lag = loopLag();
    const rtt = await pingMs(client);
    reportTiming('proxied PING, 100 ms each way', rtt);
    expect(rtt).toBeGreaterThanOrEqual(195);
    expect(rtt).toBeLessThan(400 + lag.stop());
  });

  it('delays one direction only', async () => {
    proxy.setDelay(200, 'toServer');
    const lag = loopLag();
    const rtt = await pingMs(client);
    reportTiming('proxied PING, 200 ms toServer only', rtt);
    // Paying it both ways would take 400 ms; event-loop delay is allowed for below that.
    expect(rtt).toBeGreaterThanOrEqual(195);
    expect(rtt).toBeLessThan(350 + Math.min(lag.stop(), 45));
  });

  it('keeps replies in order under a delay', async () => {
    proxy.setDelay(30);
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => client.echo(`m${i}`)));
    expect(replies).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`));
  });

  it('holds traffic while paused and delivers it on resume', async () => {
    const muted = new Redis({ host: '127.0.0.1', port: proxy.port, commandTimeout: 200 });
    muted.on('error', () => undefined);
    try {
      expect(await muted.ping()).toBe('PONG');
      proxy.pause();
      expect(String(await errorOf(() => muted.ping()))).toMatch(/timed out/i);
      const held = client.echo('held');
      proxy.resume();
      expect(await held).toBe('held');
    } finally {
      muted.disconnect();
    }
  });

  it('drops every proxied connection on close', async () => {
    const extra = await TcpDelayProxy.start(redis.port);
    const other = new Redis({ host: '127.0.0.1', port: extra.port, retryStrategy: () => null });
    other.on('error', () => undefined);
    expect(await other.ping()).toBe('PONG');
    const closed = new Promise((resolve) => other.once('end', resolve));
    await extra.close();
    await closed;
    expect(other.status).toBe('end');
  });
});
