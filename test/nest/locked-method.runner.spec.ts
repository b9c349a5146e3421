import { defer, Observable, Subject } from 'rxjs';
import { nextEvent } from '../harness/engine-events.js';
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

  /**
   * The method's source, and a promise of the lock key's presence in the store at the moment
   * the runner subscribed to the source: the runner subscribes once it holds the lock.
   */
  function lockedSource(): {
    source: Subject<number>;
    method: () => Observable<number>;
    subscribed: Promise<string[]>;
  } {
    const source = new Subject<number>();
    let keysThen: (keys: string[]) => void;
    const subscribed = new Promise<string[]>((resolve) => (keysThen = resolve));
    const method = (): Observable<number> =>
      defer(() => {
        keysThen(memory.store.keys());
        return source;
      });
    return { source, method, subscribed };
  }

  /** Subscribes, waits until the method runs under the lock, then deletes its key. */
  async function loseWhileStreaming(onLost: LockedMethodPlan['onLost']) {
    const { source, method, subscribed } = lockedSource();
    const stream = runLockedMethod(memory.engine, plan(onLost), [], method) as Observable<unknown>;
    const seen: unknown[] = [];
    const ended = new Promise<{ error?: unknown }>((resolve) =>
      stream.subscribe({
        next: (value) => seen.push(value),
        error: (error: unknown) => resolve({ error }),
        complete: () => resolve({}),
      }),
    );
    expect(await subscribed).toEqual(['lock:feed']);
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

  it("keeps streaming with onLost: 'ignore' once the lock it held is lost", async () => {
    const { source, method, subscribed } = lockedSource();
    const stream = runLockedMethod(
      memory.engine,
      plan('ignore'),
      [],
      method,
    ) as Observable<unknown>;
    const seen: unknown[] = [];
    const subscription = stream.subscribe((value) => seen.push(value));
    // The source ran under the lock: its key was in the store when the runner subscribed.
    expect(await subscribed).toEqual(['lock:feed']);
    const lost = nextEvent(memory.engine, 'lost', 'feed');
    memory.store.forceDelete('lock:feed');
    // Renewal found the key gone: the lock was held until then, and is not any more.
    expect(await lost).toMatchObject({ key: 'feed', reason: 'vanished' });

    source.next(2);

    expect(seen).toEqual([2]);
    expect(source.observed).toBe(true);
    subscription.unsubscribe();
  });

  it("ends with onLost's value when it is a function", async () => {
    const { ended, seen } = await loseWhileStreaming(() => 'lost');

    expect(ended.error).toBeUndefined();
    expect(seen).toEqual([1, 'lost']);
  });
});
