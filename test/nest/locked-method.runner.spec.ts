import { Observable, Subject } from 'rxjs';
import { useMemoryEngine } from '../harness/test-engine.js';
import { LockLostError } from '../../lib/errors/lock.errors.js';
import {
  runLockedMethod,
  type LockedMethodPlan,
} from '../../lib/nest/decorators/locked-method.runner.js';

describe('a decorated method returning an Observable whose lock is lost', () => {
  const memory = useMemoryEngine();

  function plan(onLost: LockedMethodPlan['onLost']): LockedMethodPlan {
    return {
      method: 'FeedController.stream',
      resolveKeys: () => 'feed',
      options: { ttl: 90 },
      onBusy: 'throw',
      onLost,
      returnsObservable: true,
    };
  }

  /** Subscribes, waits for the lock, then deletes its key: renewal finds it gone. */
  async function loseWhileStreaming(onLost: LockedMethodPlan['onLost']) {
    const source = new Subject<number>();
    const stream = runLockedMethod(
      memory.engine,
      plan(onLost),
      [],
      () => source,
    ) as Observable<unknown>;
    const seen: unknown[] = [];
    const ended = new Promise<{ error?: unknown }>((resolve) =>
      stream.subscribe({
        next: (value) => seen.push(value),
        error: (error: unknown) => resolve({ error }),
        complete: () => resolve({}),
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    source.next(1);
    memory.store.forceDelete('lock:feed');
    return { ended: await ended, seen, source };
  }

  it('errors with LockLostError as soon as the lock is lost, and stops the source', async () => {
    const { ended, seen, source } = await loseWhileStreaming('throw');

    expect(ended.error).toBeInstanceOf(LockLostError);
    expect(seen).toEqual([1]);
    expect(source.observed).toBe(false);
  });

  it("keeps streaming with onLost: 'ignore'", async () => {
    const source = new Subject<number>();
    const stream = runLockedMethod(
      memory.engine,
      plan('ignore'),
      [],
      () => source,
    ) as Observable<unknown>;
    const seen: unknown[] = [];
    const subscription = stream.subscribe((value) => seen.push(value));
    await new Promise((resolve) => setTimeout(resolve, 10));
    memory.store.forceDelete('lock:feed');
    await new Promise((resolve) => setTimeout(resolve, 100));

    source.next(2);

    expect(seen).toEqual([2]);
    subscription.unsubscribe();
  });

  it("ends with onLost's value when it is a function", async () => {
    const { ended, seen } = await loseWhileStreaming(() => 'lost');

    expect(ended.error).toBeUndefined();
    expect(seen).toEqual([1, 'lost']);
  });
});
