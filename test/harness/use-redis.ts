import type { Redis } from 'ioredis';
import type { LockEngine, LockEngineConfig } from '../../lib/engine/lock-engine.js';
import { RedisServer } from './redis-server.js';
import { createTestEngine } from './test-engine.js';

export interface UseRedisServerOptions {
  /** Opens `client` and `probe` (the default); off for files whose only Redis users are workers. */
  readonly clients?: boolean;
  /**
   * Runs first in `afterAll`, while the connections and the server are still up: closes what
   * the file built on them (an engine, an app, worker processes).
   */
  readonly beforeStop?: () => unknown;
}

/** What `useRedisServer` started; read it in hooks and tests, once `beforeAll` has run. */
export interface RedisHarness {
  readonly server: RedisServer;
  /** The connection the code under test uses. */
  readonly client: Redis;
  /** The test's own connection, to look at and change what the code under test sees. */
  readonly probe: Redis;
  /** One more connection, closed with the others in `afterAll`. */
  connect(): Redis;
}

/** `value`, once a hook has set it; a clear error for a read too early (at collection time). */
export function started<T>(value: T | undefined, what: string): T {
  if (value === undefined) {
    throw new Error(`${what} is not there: read it in a hook or a test, after beforeAll`);
  }
  return value;
}

/**
 * A throwaway redis-server for the enclosing `describe` (or file): `beforeAll` starts it and
 * opens `client` and `probe`; `afterAll` runs `beforeStop`, disconnects every connection and
 * stops the server.
 */
export function useRedisServer(options: UseRedisServerOptions = {}): RedisHarness {
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  let probe: Redis | undefined;
  const connections: Redis[] = [];

  const harness: RedisHarness = {
    get server() {
      return started(server, 'the redis-server');
    },
    get client() {
      return started(client, 'the client connection');
    },
    get probe() {
      return started(probe, 'the probe connection');
    },
    connect() {
      const connection = started(server, 'the redis-server').client();
      connections.push(connection);
      return connection;
    },
  };

  beforeAll(async () => {
    server = await RedisServer.start();
    if (options.clients === false) return;
    client = harness.connect();
    probe = harness.connect();
  });

  afterAll(async () => {
    try {
      await options.beforeStop?.();
    } finally {
      for (const connection of connections) connection.disconnect();
      await server?.stop();
    }
  });

  return harness;
}

/**
 * An engine on `redis.client` for each test: `beforeEach` creates it (`createTestEngine` with
 * `overrides`), `afterEach` closes it and empties the database through `redis.probe`.
 */
export function useTestEngine(
  redis: RedisHarness,
  overrides: Partial<LockEngineConfig> = {},
): { readonly engine: LockEngine } {
  let engine: LockEngine | undefined;

  beforeEach(() => {
    engine = createTestEngine(redis.client, overrides);
  });

  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    await redis.probe.flushall();
  });

  return {
    get engine() {
      return started(engine, 'the engine');
    },
  };
}
