import { Inject, Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { LockBusyError } from '../errors/lock.errors.js';
import { LockService } from '../nest/lock.service.js';
import { MemoryLockStore, LockTestingModule } from './index.js';

@Injectable()
class ReportService {
  constructor(@Inject(LockService) readonly locks: LockService) {}
}

/** Uses LockService without importing any lock module: only a global one can serve it. */
@Module({ providers: [ReportService], exports: [ReportService] })
class ReportModule {}

describe('LockTestingModule', () => {
  const opened: TestingModule[] = [];

  async function compile(imports: Parameters<typeof Test.createTestingModule>[0]['imports']) {
    const moduleRef = await Test.createTestingModule({ imports }).compile();
    opened.push(moduleRef);
    return moduleRef;
  }

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((moduleRef) => moduleRef.close()));
  });

  it('provides a LockService that locks in the store it is given', async () => {
    const store = new MemoryLockStore();
    const moduleRef = await compile([LockTestingModule.forRoot({ store })]);
    const locks = moduleRef.get(LockService);

    const keysWhileHeld = await locks.withLock('report:7', () => store.keys());

    expect(keysWhileHeld).toEqual(['lock:report:7']);
    expect(store.keys()).toEqual([]);
  });

  it('is global by default', async () => {
    const moduleRef = await compile([LockTestingModule.forRoot(), ReportModule]);

    expect(moduleRef.get(ReportService).locks).toBeInstanceOf(LockService);
  });

  it('is local with isGlobal: false', async () => {
    await expect(
      Test.createTestingModule({
        imports: [LockTestingModule.forRoot({ isGlobal: false }), ReportModule],
      }).compile(),
    ).rejects.toThrow(/LockService/);
  });

  it('gives each call its own store, so tests do not share locks', async () => {
    const first = (await compile([LockTestingModule.forRoot()])).get(LockService);
    const second = (await compile([LockTestingModule.forRoot()])).get(LockService);

    const held = await first.acquire('k');

    const other = await second.tryAcquire('k');
    expect(other).toBeDefined();
    expect(await first.tryAcquire('k')).toBeUndefined();
    await held.release();
    await other!.release();
  });

  it('passes the other LockModule options on', async () => {
    const store = new MemoryLockStore();
    const moduleRef = await compile([
      LockTestingModule.forRoot({
        store,
        keyPrefix: 'test:',
        defaults: { wait: 0 },
        busyStatusCode: 423,
      }),
    ]);
    const locks = moduleRef.get(LockService);

    const held = await locks.acquire('k');

    expect(store.keys()).toEqual(['test:k']);
    const busy = await locks.acquire('k').catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(LockBusyError);
    expect(busy).toMatchObject({ statusCode: 423 });
    await held.release();
  });

  it('releases locks as their holders end at close, and leaves the store usable', async () => {
    const store = new MemoryLockStore();
    const moduleRef = await Test.createTestingModule({
      imports: [LockTestingModule.forRoot({ store })],
    }).compile();
    const lock = await moduleRef.get(LockService).acquire('k');
    lock.signal.addEventListener('abort', () => void lock.release());

    await moduleRef.close();

    expect(store.keys()).toEqual([]);
    expect(await store.tryAcquire({ keys: ['k'], token: 't', ttl: 1_000, fencing: false })).toEqual(
      {
        acquired: true,
      },
    );
  });
});
