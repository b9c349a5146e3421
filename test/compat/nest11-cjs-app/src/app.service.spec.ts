import { Test, TestingModule } from '@nestjs/testing';
import { LockService } from 'nestjs-distributed-lock';
import {
  LockTestingModule,
  MemoryLockStore,
} from 'nestjs-distributed-lock/testing';
import { AppService } from './app.service';

describe('AppService', () => {
  let module: TestingModule;
  let service: AppService;
  const store = new MemoryLockStore();

  beforeEach(async () => {
    module = await Test.createTestingModule({
      imports: [LockTestingModule.forRoot({ store })],
      providers: [AppService],
    }).compile();
    await module.init();
    service = module.get(AppService);
  });

  afterEach(() => module.close());

  it('runs reserve for one sku one caller at a time', async () => {
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => service.reserve('sku-1')),
    );
    expect(results.map((result) => result.reserved).sort()).toEqual([
      1, 2, 3, 4,
    ]);
    expect(service.mostInside).toBe(1);
    expect(store.keys()).toEqual([]);
  });

  it('cannot take a key the test holds', async () => {
    const locks = module.get(LockService);
    const held = await locks.acquire('stock:sku-2');
    await expect(locks.tryAcquire('stock:sku-2')).resolves.toBeUndefined();
    await held.release();
  });
});
