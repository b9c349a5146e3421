// A CommonJS consumer of the packed library on NestJS 11: run by ../run-compat.sh under
// `node --no-experimental-require-module` (Node 20 before 20.19, where require() cannot load
// ES modules), and again with Node's defaults, where require() and import() must share one copy.
require('reflect-metadata');
const assert = require('node:assert/strict');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { LockModule, LockService, LockBusyError } = require('nestjs-distributed-lock');
const { MemoryLockStore } = require('nestjs-distributed-lock/testing');
const store = require('nestjs-distributed-lock/store');

async function main() {
  const redisPort = Number(process.env.REDIS_PORT);
  class AppModule {}
  Module({ imports: [LockModule.forRoot({ redis: `redis://127.0.0.1:${redisPort}` })] })(AppModule);
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const locks = app.get(LockService);
  const held = await locks.acquire('cjs:k', { wait: 0 });
  assert.equal(await locks.tryAcquire('cjs:k'), undefined, 'a held key is busy');
  await assert.rejects(locks.acquire('cjs:k', { wait: 0 }), LockBusyError);
  assert.equal(await held.release(), 'released');
  assert.equal(await locks.withLock('cjs:k', () => 'ran'), 'ran');
  await app.close();
  assert.equal(typeof new MemoryLockStore().tryAcquire, 'function');
  // The store authors' entry: the store classes, one copy with the ./testing entry's.
  assert.equal(typeof store.RedisLockStore, 'function');
  assert.equal(typeof store.RedlockLockStore, 'function');
  assert.equal(store.MemoryLockStore, MemoryLockStore);

  const imported = await import('nestjs-distributed-lock');
  const oneCopy = imported.LockService === LockService;
  // With require(esm), both resolve the same build (the `module-sync` condition).
  if (process.execArgv.includes('--no-experimental-require-module')) {
    console.log(`  ok   require() loads the CommonJS build without require(esm)`);
  } else {
    assert.ok(oneCopy, 'require() and import() give one LockService');
    console.log('  ok   require() and import() share one copy of the library');
  }
  console.log('  ok   a CommonJS app locks and releases through LockService, on Redis');
  console.log('  ok   require() loads nestjs-distributed-lock/store');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
