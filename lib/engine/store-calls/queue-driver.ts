import { pollInterval } from '../../policy/wait-policy.js';
import type { ReleaseListener } from '../../stores/lock-store.interface.js';
import type { EngineContext } from './engine-context.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { QueueDriver } from '../wait/wait-queue.js';
import type { KeyTable } from '../wait/wait.types.js';

/**
 * What every queue of an engine asks of the store, made once and shared by them all, so that
 * a queue makes no closures of its own.
 */
export function createQueueDriver(context: EngineContext, busyKeys: KeyTable): QueueDriver {
  const { pollCap } = context.config;
  let waiting = 0;
  return {
    subscribe: (queue, onRelease) => subscribeToReleases(context, queue, onRelease),
    leaveTurns: (queue) => {
      for (const key of queue.keys) context.store.waiters?.leave(key, queue.id);
    },
    discard: (queue, grant) => context.giveBack(queue.keys, grant.token, queue.kind),
    busyKeys,
    pollCapOf: (queue) => (queue.kind.type === 'write' ? pollCap : pollInterval(pollCap, waiting)),
    waiting: (change) => void (waiting += change),
    localHandoffs: context.localGrants ? context.config.localHandoffs : 0,
    turnGrace: context.store.waiters?.turnGrace,
  };
}

/** Subscribes to every key of the queue, or to none: a partial subscription is undone. */
async function subscribeToReleases(
  context: EngineContext,
  queue: WaitQueue,
  onRelease: ReleaseListener,
): Promise<() => void> {
  const results = await Promise.allSettled(
    queue.keys.map((key) =>
      // A subscription confirmed after the timeout must still be undone, or it leaks.
      context.storeCall(context.store.subscribe(key, onRelease), queue.label, 'subscribe', {
        late: (late) => late(),
      }),
    ),
  );
  const unsubscribes = results.flatMap((result) =>
    result.status === 'fulfilled' ? [result.value] : [],
  );
  const unsubscribeAll = (): void => unsubscribes.forEach((unsubscribe) => unsubscribe());
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) {
    unsubscribeAll();
    throw failure.reason;
  }
  return unsubscribeAll;
}
