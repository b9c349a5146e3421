import { useMemoryEngine } from '../harness/test-engine.js';
import { waitUntil } from '../harness/waits.js';
import { LockLostError, LockOptionsError } from '../../lib/errors/lock.errors.js';

describe('a lock lost while its code runs', () => {
  const memory = useMemoryEngine();

  /** Runs `withLock` on `k` whose key an outside actor deletes while `fn` runs. */
  function runLosing<T>(result: () => T, options = {}): Promise<T> {
    return memory.engine.withLock(
      'k',
      async (lock) => {
        memory.store.forceDelete('lock:k');
        // Renewal (every ttl / 3) finds the key gone and aborts the signal.
        await new Promise((resolve) => lock.signal.addEventListener('abort', resolve));
        return result();
      },
      { ttl: 90, ...options },
    );
  }

  it('fails withLock with LockLostError, keeping what the function returned', async () => {
    const error = await runLosing(() => 'done').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LockLostError);
    expect(error).toMatchObject({ key: 'k', reason: 'vanished', result: 'done', statusCode: 503 });
  });

  it("keeps the function's own error as the cause", async () => {
    const failure = new Error('payment failed');

    const error = await runLosing(() => {
      throw failure;
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LockLostError);
    expect((error as Error).cause).toBe(failure);
  });

  it("settles as the function did with onLost: 'ignore'", async () => {
    expect(await runLosing(() => 'done', { onLost: 'ignore' })).toBe('done');
  });

  it("returns onLost's value when it is a function", async () => {
    const seen: LockLostError[] = [];

    const value = await runLosing(() => 'done', {
      onLost: (error: LockLostError) => (seen.push(error), 'compensated'),
    });

    expect(value).toBe('compensated');
    expect(seen[0]).toMatchObject({ reason: 'vanished', result: 'done' });
  });

  it('counts a key found gone at release as lost, though renewal had not seen it yet', async () => {
    const error = await memory.engine
      .withLock('k', () => memory.store.forceDelete('lock:k'), { ttl: 60_000 })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LockLostError);
  });

  it('rejects a bad onLost before any store call', async () => {
    await expect(
      memory.engine.withLock('k', () => 1, { onLost: 'retry' as never }),
    ).rejects.toBeInstanceOf(LockOptionsError);
    expect(memory.store.keys()).toEqual([]);
  });
});

describe('minHold', () => {
  const memory = useMemoryEngine();

  it('keeps the key after release until minHold has passed since the lock was taken', async () => {
    const lock = await memory.engine.acquire('job', { minHold: 300 });
    const takenAt = performance.now();

    expect(await lock.release()).toBe('released');

    expect(memory.store.keys()).toEqual(['lock:job']);
    expect(await memory.engine.tryAcquire('job')).toBeUndefined();
    await waitUntil('minHold to pass', () => memory.store.keys().length === 0, 2_000, 5);
    expect(performance.now() - takenAt).toBeGreaterThanOrEqual(290);
  });

  it('frees the key at once when released after minHold', async () => {
    const lock = await memory.engine.acquire('job', { minHold: 20 });
    await new Promise((resolve) => setTimeout(resolve, 40));

    await lock.release();

    expect(memory.store.keys()).toEqual([]);
  });

  it.each([
    [{ minHold: 0 }, /"minHold" must be an integer/],
    [{ minHold: 1.5 }, /"minHold" must be an integer/],
    [{ minHold: 500, maxHold: 100 }, /must not be longer than "maxHold"/],
  ])('rejects %j', async (options, message) => {
    await expect(memory.engine.acquire('job', options)).rejects.toThrow(message);
  });
});
