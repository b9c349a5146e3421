// A NestJS 11 (Express) app on the packed library, checked over real HTTP against a real
// redis-server. Plain JavaScript on purpose: no TypeScript and no emitted decorator metadata,
// so the decorators are applied by hand, the way compiled code applies them. Run by
// ../run-compat.sh from a temp dir (REDIS_PORT and REDIS_PID come from there).
/* global fetch -- Node's built-in (Node >= 18); the repo's lint config lists only process and console. */
import 'reflect-metadata';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Body, Controller, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLock, LockModule } from 'nestjs-distributed-lock';

const redisPort = Number(process.env.REDIS_PORT);
const redisPid = Number(process.env.REDIS_PID);

/** What TypeScript's `__decorate` does for a method: bottom decorator first, then redefine. */
function decorateMethod(cls, name, ...decorators) {
  let descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name);
  for (const decorator of decorators.reverse()) {
    descriptor = decorator(cls.prototype, name, descriptor) ?? descriptor;
  }
  Object.defineProperty(cls.prototype, name, descriptor);
}

class ShopController {
  // Holds its lock long enough for a second request to find it busy.
  async buy(id) {
    await sleep(300);
    return { bought: id };
  }

  // The key template reads a property the request body does not have.
  async bad(_id, _body) {
    return { unreachable: true };
  }
}
Controller('shop')(ShopController);
decorateMethod(ShopController, 'buy', Post(':id'), DistributedLock('k:{0}', { wait: 0 }));
Param('id')(ShopController.prototype, 'buy', 0);
decorateMethod(ShopController, 'bad', Post('bad/:id'), DistributedLock('k:{1.missing}'));
Param('id')(ShopController.prototype, 'bad', 0);
Body()(ShopController.prototype, 'bad', 1);

class AppModule {}
Module({
  // storeTimeout: a dead Redis should answer 503 in a second, not the default five.
  imports: [LockModule.forRoot({ redis: `redis://127.0.0.1:${redisPort}`, storeTimeout: 1000 })],
  controllers: [ShopController],
})(AppModule);

const checks = [];
const check = (name, fn) => checks.push({ name, fn });
let base;

async function post(path, body) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  return { status: response.status, body: await response.json() };
}

function expect(condition, detail) {
  if (!condition) throw new Error(detail);
}

/** Resolves once nothing listens on the Redis port any more (the kill has taken effect). */
async function portClosed(port) {
  for (let i = 0; i < 100; i++) {
    const open = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (!open) return;
    await sleep(20);
  }
  throw new Error(`redis on port ${port} still accepts connections after SIGKILL`);
}

check('the library resolves NestJS 11 and ioredis 5 (not the repo root)', () => {
  // Resolve from the library's own folder: that is where its imports are resolved from.
  const fromLibrary = createRequire(import.meta.resolve('nestjs-distributed-lock'));
  const major = (name) => fromLibrary(`${name}/package.json`).version.split('.')[0];
  const found = ['@nestjs/common', '@nestjs/core', 'ioredis'].map((n) => `${n}@${major(n)}`);
  expect(found.join(' ') === '@nestjs/common@11 @nestjs/core@11 ioredis@5', found.join(' '));
});

check('two concurrent requests on one key: one 201, one 409 naming the key as busy', async () => {
  const responses = await Promise.all([post('/shop/42'), post('/shop/42')]);
  const statuses = responses.map((r) => r.status).sort();
  expect(statuses.join() === '201,409', `statuses ${statuses}`);
  const busy = responses.find((r) => r.status === 409).body;
  expect(
    busy.statusCode === 409 && busy.error === 'LOCK_BUSY' && busy.resource === 'k:42',
    JSON.stringify(busy),
  );
});

check('the lock is released after the handler: the next request gets it', async () => {
  const { status, body } = await post('/shop/42');
  expect(status === 201 && body.bought === '42', `${status} ${JSON.stringify(body)}`);
});

check('a key template that finds no value answers 400', async () => {
  const { status, body } = await post('/shop/bad/1', {});
  expect(status === 400 && body.message.includes('{1.missing}'), JSON.stringify(body));
});

check('with redis killed, a request answers 503', async () => {
  process.kill(redisPid, 'SIGKILL');
  await portClosed(redisPort);
  const { status, body } = await post('/shop/43');
  expect(status === 503 && body.statusCode === 503, `${status} ${JSON.stringify(body)}`);
});

// Errors answered on purpose above would otherwise be logged by Nest's exception handler.
const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
await app.listen(0, '127.0.0.1');
base = `http://127.0.0.1:${app.getHttpServer().address().port}`;

let passed = 0;
let failed = 0;
for (const { name, fn } of checks) {
  try {
    await fn();
    passed++;
    console.log(`  ok   ${name}`);
  } catch (error) {
    failed++;
    console.log(`  FAIL ${name}: ${error.message}`);
  }
}

// Shutdown with Redis gone must not hang (the library closes the connection it created).
const closed = await Promise.race([app.close().then(() => true), sleep(5000).then(() => false)]);
if (closed) {
  passed++;
  console.log('  ok   the app closes with redis down');
} else {
  failed++;
  console.log('  FAIL the app closes with redis down: app.close() still pending after 5 s');
}
console.log(`  ran in ${(performance.now() / 1000).toFixed(1)} s (node start to close)`);
// Last line of the run, in the plain 'N passed, N failed' form.
console.log(`nest11-compat: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
