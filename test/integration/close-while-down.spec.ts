import { ChildWorker, killLiveWorkers } from '../harness/child-workers.js';
import { useRedisServer } from '../harness/use-redis.js';
import type { CloseWhileDownConfig } from '../fixtures/close-while-down-worker.js';

const SPAWN_TIMEOUT = 20_000;

/**
 * ioredis's `disconnect()` arms a timer (`disconnectTimeout`) that only the socket's close
 * clears; a socket whose server went away has closed already, so the timer holds the process
 * up for its whole length (2 s by default). The library's own connections set it short
 * (owned-client.ts).
 */
describe('closing the library while Redis is down', () => {
  const redis = useRedisServer({ clients: false, beforeStop: killLiveWorkers });
  afterEach(() => redis.server.restart());

  /** The timers still keeping the worker up half a second after it closed, its Redis gone. */
  async function timersAfterClose(plain: boolean): Promise<number> {
    const config: CloseWhileDownConfig = { port: redis.server.port, plain };
    const worker = ChildWorker.spawn('close-while-down-worker', config);
    await worker.next('ready', SPAWN_TIMEOUT);
    await redis.server.stop();
    return (await worker.next<{ type: string; value: number }>('result', SPAWN_TIMEOUT)).value;
  }

  it("leaves no timer of the library's connections to keep the process up", async () => {
    expect(await timersAfterClose(false)).toBe(0);
  });

  it("canary: a plain ioredis client dropped the same way leaves ioredis's 2 s timer", async () => {
    expect(await timersAfterClose(true)).toBeGreaterThanOrEqual(1);
  });
});
