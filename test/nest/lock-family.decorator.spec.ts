import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { maxConcurrent, writerOverlaps, type Interval } from '../harness/intervals.js';
import { LockOptionsError } from '../../lib/errors/lock.errors.js';
import { LockTestingModule } from '../../lib/testing/index.js';
import { DistributedLock } from '../../lib/nest/decorators/distributed-lock.decorator.js';
import { sleep } from '../harness/waits.js';

async function section(into: Interval[]): Promise<void> {
  const enter = process.hrtime.bigint();
  await sleep(3);
  into.push([enter, process.hrtime.bigint()]);
}

@Injectable()
class ExportService {
  readonly exports: Interval[] = [];
  readonly reads: Interval[] = [];
  readonly writes: Interval[] = [];

  @DistributedLock('export:{0}', { limit: 2 })
  run(_tenant: string): Promise<void> {
    return section(this.exports);
  }

  @DistributedLock('config:{0}', { mode: 'read' })
  read(_name: string): Promise<void> {
    return section(this.reads);
  }

  @DistributedLock('config:{0}', { mode: 'write' })
  async rebuild(name: string, thenRead = false): Promise<void> {
    await section(this.writes);
    if (thenRead) await this.read(name);
  }

  @DistributedLock('config:{0}', { mode: 'read' })
  async readThenRebuild(name: string): Promise<void> {
    await this.rebuild(name);
  }
}

describe('@DistributedLock with limit and mode', () => {
  let moduleRef: TestingModule;
  let service: ExportService;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [LockTestingModule.forRoot()],
      providers: [ExportService],
    }).compile();
    await moduleRef.init();
    service = moduleRef.get(ExportService);
  });
  afterEach(() => moduleRef.close());

  it('runs a semaphore-locked method at most limit times at once', async () => {
    await Promise.all(Array.from({ length: 8 }, () => service.run('acme')));
    expect(service.exports).toHaveLength(8);
    expect(maxConcurrent(service.exports)).toBe(2);
  });

  it('lets read-locked calls overlap and keeps write-locked ones alone', async () => {
    const calls = Array.from({ length: 12 }, (_, i) =>
      i % 4 === 0 ? service.rebuild('site') : service.read('site'),
    );
    await Promise.all(calls);
    expect(writerOverlaps(service.writes, service.reads)).toBe(0);
    expect(maxConcurrent(service.reads)).toBeGreaterThan(1);
  });

  it('reads inside its own write lock, and refuses to write inside its own read lock', async () => {
    await service.rebuild('site', true);
    expect(service.reads).toHaveLength(1);
    await expect(service.readThenRebuild('site')).rejects.toBeInstanceOf(LockOptionsError);
  });
});
