/** Work done by a locked stream itself (defer, switchMap) runs in the lock's context, so nested calls on the same key are reentrant. */
import { Injectable } from '@nestjs/common';
import { defer, firstValueFrom, Observable } from 'rxjs';
import { currentLock, DistributedLock } from '../../lib/index.js';
import { withLockContext } from '../harness/lock-context.js';

@Injectable()
class Reports {
  @DistributedLock('report:{0}', { wait: 500 })
  stream(id: string): Observable<string | undefined> {
    return defer(() => this.render(id));
  }

  @DistributedLock('report:{0}', { wait: 500 })
  async render(_id: string): Promise<string | undefined> {
    return currentLock()?.key;
  }
}

it('lets the stream of a locked Observable method re-enter its own lock', () =>
  withLockContext([Reports], async ({ app }) => {
    await expect(firstValueFrom(app.get(Reports).stream('r1'))).resolves.toBe('report:r1');
  }));
