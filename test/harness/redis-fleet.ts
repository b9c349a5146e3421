import type { Redis } from 'ioredis';
import { RedisServer } from './redis-server.js';

/** Independent redis-servers (no replication between them), e.g. the N masters of Redlock. */
export interface RedisFleet {
  readonly servers: readonly RedisServer[];
  readonly ports: readonly number[];
  /** One new client per server; the caller closes them. */
  clients(): Redis[];
  /** Stops every server of the fleet (SIGKILL) and waits until all are gone. */
  stopAll(): Promise<void>;
}

export async function startRedisFleet(count: number): Promise<RedisFleet> {
  const started = await Promise.allSettled(
    Array.from({ length: count }, () => RedisServer.start()),
  );
  const servers = started.flatMap((result) =>
    result.status === 'fulfilled' ? [result.value] : [],
  );
  const stopAll = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.stop()));
  };
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) {
    // Some servers may have started: never leave them behind.
    await stopAll();
    throw failure.reason;
  }
  return {
    servers,
    ports: servers.map((server) => server.port),
    clients: () => servers.map((server) => server.client()),
    stopAll,
  };
}
