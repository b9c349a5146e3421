/**
 * With `import type { Observable }` (or a compiler that emits no decorator metadata) the
 * decorator cannot see the Observable return type. The call then resolves to an Observable that
 * still takes the lock per subscription, rather than a stream that runs unlocked.
 */
import { Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { firstValueFrom, isObservable, timer, map, type Observable } from 'rxjs';
import { DistributedLock } from '../../lib/index.js';
import { withLockContext } from '../harness/lock-context.js';

@Injectable()
class Feeds {
  @DistributedLock('feed:{0}')
  open(id: string): Observable<string> {
    return timer(50).pipe(map(() => id));
  }
}

it('locks a stream per subscription even when Observable is a type-only import', () =>
  withLockContext([Feeds], async ({ app, client }) => {
    expect(Reflect.getMetadata('design:returntype', Feeds.prototype, 'open')).toBe(Object);
    const stream = (await app.get(Feeds).open('f1')) as unknown;
    expect(isObservable(stream)).toBe(true);
    // Not locked until subscribed; locked while the stream runs; released when it completes.
    expect(await client.exists('lock:feed:f1')).toBe(0);
    const value = firstValueFrom(stream as Observable<string>);
    const heldWhileRunning = await waitForKey(client, 'lock:feed:f1');
    expect(heldWhileRunning).toBe(true);
    expect(await value).toBe('f1');
    expect(await client.exists('lock:feed:f1')).toBe(0);
  }));

async function waitForKey(client: Redis, key: string): Promise<boolean> {
  const deadline = performance.now() + 1_000;
  while (performance.now() < deadline) {
    if ((await client.exists(key)) === 1) return true;
  }
  return false;
}
