import { startRedisFleet, type RedisFleet } from './redis-fleet.js';
import { isRunning } from './redis-process.js';

describe('startRedisFleet', () => {
  let fleet: RedisFleet | undefined;

  afterEach(async () => {
    await fleet?.stopAll();
  });

  it('starts independent servers that do not share data, and stops them all', async () => {
    fleet = await startRedisFleet(5);
    expect(new Set(fleet.ports).size).toBe(5);
    const clients = fleet.clients();
    try {
      await clients[0]!.set('only-here', '1');
      const seen = await Promise.all(clients.map((client) => client.exists('only-here')));
      expect(seen).toEqual([1, 0, 0, 0, 0]);
      expect(await Promise.all(clients.map((client) => client.ping()))).toEqual(
        Array(5).fill('PONG'),
      );
    } finally {
      clients.forEach((client) => client.disconnect());
    }
    const pids = fleet.servers.map((server) => server.pid!);
    await fleet.stopAll();
    expect(pids.filter(isRunning)).toEqual([]);
  });
});
