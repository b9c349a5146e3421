// A NestJS app on the packed library with one Redis client library installed, node-redis or
// Valkey GLIDE (COMPAT_CLIENT), and no ioredis: it makes its own client, as an app that already
// uses one for its cache does, provides it, and hands it to LockModule.forRootAsync. Plain
// JavaScript with the decorators applied by hand (see ../nest11/app.mjs). Run by
// ../run-clients.sh from a temp dir against a real redis-server (REDIS_PORT); NEST_MAJOR and
// CLIENT_MAJOR say what was installed.
import 'reflect-metadata';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockBusyError, LockModule, LockService } from 'nestjs-distributed-lock';

const client = process.env.COMPAT_CLIENT;
const port = Number(process.env.REDIS_PORT);
const url = `redis://127.0.0.1:${port}`;
const PACKAGES = { ioredis: 'ioredis', 'node-redis': 'redis', glide: '@valkey/valkey-glide' };
const REDIS = 'REDIS_CLIENT';
// Far longer than any wait here: a waiter that gets the key in time was told by the release.
const POLL_CAP = 60_000;

/** The app's own client of COMPAT_CLIENT, connected, with its PING and close. */
async function makeClient() {
  if (client === 'node-redis') {
    const { createClient } = await import('redis');
    const redis = createClient({ url, disableOfflineQueue: true });
    redis.on('error', () => undefined);
    await redis.connect();
    const send = (args) => redis.sendCommand(args);
    return { redis, send, ping: () => redis.ping(), close: () => redis.close() };
  }
  if (client === 'glide') {
    const { GlideClient, Logger } = await import('@valkey/valkey-glide');
    Logger.setLoggerConfig('off');
    const redis = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port }] });
    const send = (args) => redis.customCommand(args);
    return { redis, send, ping: () => redis.ping(), close: async () => redis.close() };
  }
  throw new Error(`COMPAT_CLIENT must be node-redis or glide, got "${client}"`);
}

/** An app whose RedisModule provides `redis`, and whose LockModule takes it by injection. */
function appWith(redis) {
  class RedisModule {}
  Module({ providers: [{ provide: REDIS, useValue: redis }], exports: [REDIS] })(RedisModule);
  class AppModule {}
  const locks = LockModule.forRootAsync({
    imports: [RedisModule],
    inject: [REDIS],
    useFactory: (given) => ({ redis: given, pollCap: POLL_CAP }),
  });
  Module({ imports: [locks] })(AppModule);
  return NestFactory.createApplicationContext(AppModule, { logger: false });
}

/** An app whose LockModule makes its client from a URL (`options` adds `client`). */
function appFromUrl(options, nest = {}) {
  class AppModule {}
  Module({ imports: [LockModule.forRoot({ redis: url, storeTimeout: 1_000, ...options })] })(
    AppModule,
  );
  return NestFactory.createApplicationContext(AppModule, { logger: false, ...nest });
}

/** Resolves once a release channel of `key` has a subscriber: the waiter listens for it. */
async function untilListening({ send }, key) {
  const deadline = performance.now() + 10_000;
  while ((await send(['PUBSUB', 'CHANNELS', `*${key}*`])).length === 0) {
    expect(performance.now() < deadline, `nobody listens for ${key}`);
    await sleep(5);
  }
}

function expect(condition, detail) {
  if (!condition) throw new Error(detail);
}

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

check(
  `the library finds NestJS ${process.env.NEST_MAJOR} and ${PACKAGES[client]} ${process.env.CLIENT_MAJOR}, and no other client`,
  () => {
    // Resolved from the library's own folder: where its imports are resolved from.
    const fromLibrary = createRequire(import.meta.resolve('nestjs-distributed-lock'));
    // Read from the package's folder: GLIDE's exports do not list its package.json.
    const major = (name) => {
      const entry = fromLibrary.resolve(name);
      const folder = entry.slice(
        0,
        entry.indexOf(`/node_modules/${name}/`) + `/node_modules/${name}`.length,
      );
      return JSON.parse(readFileSync(`${folder}/package.json`, 'utf8')).version.split('.')[0];
    };
    const found = `@nestjs/core@${major('@nestjs/core')} ${PACKAGES[client]}@${major(PACKAGES[client])}`;
    const wanted = `@nestjs/core@${process.env.NEST_MAJOR} ${PACKAGES[client]}@${process.env.CLIENT_MAJOR}`;
    expect(found === wanted, `found ${found}, wanted ${wanted}`);
    for (const [kind, name] of Object.entries(PACKAGES)) {
      if (kind === client) continue;
      let resolved;
      try {
        resolved = fromLibrary.resolve(name);
      } catch {
        resolved = undefined;
      }
      expect(resolved === undefined, `${name} is installed: ${resolved}`);
      expect(!existsSync(`node_modules/${name}`), `node_modules/${name} exists`);
    }
  },
);

check('a lock taken through one app excludes the other; the release wakes the waiter', async () => {
  const [first, second] = [await makeClient(), await makeClient()];
  const [a, b] = [await appWith(first.redis), await appWith(second.redis)];
  try {
    const [locksA, locksB] = [a.get(LockService), b.get(LockService)];
    const held = await locksA.acquire('compat:clients', { ttl: 60_000, wait: 0 });
    expect((await locksB.tryAcquire('compat:clients')) === undefined, 'a held key was free');
    const busy = await locksB.acquire('compat:clients', { wait: 0 }).catch((error) => error);
    expect(busy instanceof LockBusyError, `wait 0 on a held key: ${busy}`);

    const waiting = locksB.acquire('compat:clients', { ttl: 60_000, wait: 20_000 });
    await untilListening(first, 'compat:clients');
    const releasedAt = performance.now();
    expect((await held.release()) === 'released', 'the release did not find its lock');
    const taken = await waiting;
    const after = performance.now() - releasedAt;
    // pollCap is 60 s: only the release's notification, through the app's own client's
    // subscriber, gets the waiter the key this soon.
    expect(after < 5_000, `the waiter got the key ${after.toFixed(0)} ms after the release`);
    expect((await taken.release()) === 'released', 'the waiter did not hold the lock');
    expect((await locksA.withLock('compat:clients', () => 'ran')) === 'ran', 'withLock');
  } finally {
    await a.close();
    await b.close();
  }
  // The app's clients are the app's: the library left them open.
  expect((await first.ping()) === 'PONG', 'the library closed the app client');
  await first.close();
  await second.close();
});

check(`with client: '${client}', the module makes its own client from a URL`, async () => {
  const app = await appFromUrl({ client });
  try {
    const locks = app.get(LockService);
    const lock = await locks.acquire('compat:url', { wait: 0 });
    expect((await locks.tryAcquire('compat:url')) === undefined, 'a held key was free');
    expect((await lock.release()) === 'released', 'the release did not find its lock');
  } finally {
    await app.close();
  }
});

check(
  'a URL without `client` asks for ioredis: the app fails to start, saying to install it',
  async () => {
    // abortOnError: false, or Nest would end the process rather than reject.
    const error = await appFromUrl({}, { abortOnError: false }).then(
      (app) => app.close().then(() => new Error('the app started without ioredis')),
      (caught) => caught,
    );
    expect(
      error.name === 'LockOptionsError' && error.message.includes('"ioredis" package'),
      `bootstrap without ioredis: ${error}`,
    );
  },
);

for (const { name, fn } of checks) {
  try {
    await fn();
    console.log(`  ok   ${name}`);
  } catch (error) {
    console.error(`  FAIL ${name}\n${error.stack ?? error}`);
    process.exit(1);
  }
}
console.log(`${client} on NestJS ${process.env.NEST_MAJOR}: passed`);
