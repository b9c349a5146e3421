import { tracingChannel } from 'node:diagnostics_channel';
import { useMemoryEngine } from '../harness/test-engine.js';
import { LockBusyError } from '../../lib/errors/lock.errors.js';
import { ACQUIRE_CHANNEL, EXTEND_CHANNEL, RELEASE_CHANNEL } from '../../lib/engine/lock.events.js';

type Seen = [event: string, context: Record<string, unknown>];

/** Subscribes to every event of a tracing channel, for the test; returns what it saw. */
function watch(name: string): { seen: Seen[]; stop: () => void } {
  const seen: Seen[] = [];
  const record =
    (event: string) =>
    (context: object): void => {
      seen.push([event, { ...context }]);
    };
  const handlers = {
    start: record('start'),
    end: record('end'),
    asyncStart: record('asyncStart'),
    asyncEnd: record('asyncEnd'),
    error: record('error'),
  };
  const channel = tracingChannel<object>(name);
  channel.subscribe(handlers);
  return { seen, stop: () => channel.unsubscribe(handlers) };
}

describe('tracing channels', () => {
  const memory = useMemoryEngine();
  const watched: { stop: () => void }[] = [];
  afterEach(() => watched.splice(0).forEach((watcher) => watcher.stop()));
  function traces(name: string): Seen[] {
    const watcher = watch(name);
    watched.push(watcher);
    return watcher.seen;
  }

  it('publish start and end for an acquire, then its outcome, wait and fence', async () => {
    const seen = traces(ACQUIRE_CHANNEL);
    const lock = await memory.engine.acquire('order:1', { fencing: true });
    expect(seen.map(([event]) => event)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    const [, settled] = seen[3];
    expect(settled).toMatchObject({ key: 'order:1', outcome: 'acquired', fence: lock.fence });
    expect(settled.waited).toEqual(expect.any(Number));
    expect(settled.result).toBe(lock);
  });

  it('publish error for a busy acquire, with the error and its code as outcome', async () => {
    await memory.engine.acquire('order:2');
    const seen = traces(ACQUIRE_CHANNEL);
    await expect(memory.engine.acquire('order:2', { wait: 0 })).rejects.toThrow(LockBusyError);
    expect(seen.map(([event]) => event)).toEqual([
      'start',
      'end',
      'error',
      'asyncStart',
      'asyncEnd',
    ]);
    const [, failed] = seen[2];
    expect(failed).toMatchObject({ key: 'order:2', outcome: 'LOCK_BUSY' });
    expect(failed.error).toBeInstanceOf(LockBusyError);
  });

  it('trace releases and extends, with their results', async () => {
    const releases = traces(RELEASE_CHANNEL);
    const extensions = traces(EXTEND_CHANNEL);
    const lock = await memory.engine.acquire('order:3', { limit: 2 });
    await lock.extend(20_000);
    await lock.release();
    expect(extensions.at(-1)![1]).toMatchObject({
      keys: ['lock:order:3'],
      ttl: 20_000,
      outcome: 'extended',
    });
    const [event, released] = releases.at(-1)!;
    expect(event).toBe('asyncEnd');
    expect(released).toMatchObject({
      key: 'order:3',
      kind: { type: 'semaphore', limit: 2 },
      outcome: 'released',
    });
    expect(released.held).toEqual(expect.any(Number));
  });
});
