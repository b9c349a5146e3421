/** A locked Observable method that throws before returning: the subscriber gets the error, and the lock is released first. */
import { Injectable } from '@nestjs/common';
// A value import: with `import type`, design:returntype would be Object and the stream unlocked.
import { Observable } from 'rxjs';
import { DistributedLock } from '../../lib/index.js';
import { withLockContext } from '../harness/lock-context.js';

@Injectable()
class Feeds {
  @DistributedLock('feed:{0}')
  open(_id: string): Observable<number> {
    throw new Error('no such feed');
  }
}

it('passes a synchronous throw of an Observable method to the subscriber and unlocks', () =>
  withLockContext([Feeds], async ({ app, client }) => {
    const error = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the subscriber never got an error')), 2_000);
      app
        .get(Feeds)
        .open('f1')
        .subscribe({ error: (e: unknown) => (clearTimeout(timer), resolve(e)) });
    });
    expect((error as Error).message).toBe('no such feed');
    expect(await client.exists('lock:feed:f1')).toBe(0);
  }));
