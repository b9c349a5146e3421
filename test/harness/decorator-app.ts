import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { started, useRedisServer } from './use-redis.js';
import { DecoratorAppModule } from '../fixtures/decorator-app/decorator-app.module.js';
import { startHttpApp, type HttpApp, type Platform } from '../fixtures/decorator-app/http-app.js';
import { Probe } from '../fixtures/decorator-app/probe.js';

/** What `useDecoratorApp` started; read it in hooks and tests, once `beforeAll` has run. */
export interface DecoratorAppHarness {
  readonly app: INestApplication;
  /** `http://127.0.0.1:<port>` of the running app. */
  readonly url: string;
  /** The test's own connection to the app's Redis. */
  readonly client: Redis;
  /** The probe the app's handlers report to. */
  readonly probe: Probe;
}

/**
 * The decorator fixture app on its own redis-server, served over HTTP on `platform`, for the
 * enclosing `describe`: `beforeAll` starts both, `afterAll` closes the app, then the connection,
 * then the server.
 */
export function useDecoratorApp(platform: Platform): DecoratorAppHarness {
  let http: HttpApp | undefined;
  let probe: Probe | undefined;
  const redis = useRedisServer({ beforeStop: () => http?.app.close() });

  beforeAll(async () => {
    probe = new Probe();
    const module = DecoratorAppModule.register({ redis: redis.server.url }, probe);
    http = await startHttpApp(module, platform);
  });

  return {
    get app() {
      return started(http, 'the app').app;
    },
    get url() {
      return started(http, 'the app').url;
    },
    get client() {
      return redis.client;
    },
    get probe() {
      return started(probe, 'the probe');
    },
  };
}
