import { useMemoryEngine } from '../harness/test-engine.js';
import { waitUntil } from '../harness/waits.js';
import { currentLock, runHoldingLock } from '../../lib/engine/hold/held-lock.js';
import type { Lock } from '../../lib/engine/lock.interface.js';

/*
 * The watchdog's one timer serves every lock. Armed from inside a lock's async context, it would
 * carry that context into the losses, abort handlers and events of every other lock, where the
 * first lock then looks reentrant to unrelated code.
 */
describe("library callbacks run outside every caller's async context", () => {
  const memory = useMemoryEngine();

  it("a loss's abort handler does not see another request's lock as its own", async () => {
    const { engine } = memory;
    // R1: a lease that runs out; its abort handler wants `a`, which R2 holds.
    const r1 = await engine.acquire('r1', { ttl: 300, autoRenew: false });
    const seen: { inHandler?: Lock; enteredWhileR2Inside?: boolean } = {};
    let r2Inside = false;
    let handlerDone!: Promise<void>;
    const handlerStarted = new Promise<void>((started) => {
      r1.signal.addEventListener('abort', () => {
        seen.inHandler = currentLock();
        started();
        handlerDone = engine.withLock('a', () => void (seen.enteredWhileR2Inside = r2Inside));
      });
    });

    await engine.withLock('a', async () => {
      r2Inside = true;
      // An unrelated short lock, renewed every 30 ms, arms the watchdog from inside R2.
      const short = await engine.acquire('short', { ttl: 90 });
      await handlerStarted;
      await new Promise((resolve) => setTimeout(resolve, 50));
      await short.release();
      r2Inside = false;
    });
    await handlerDone;

    expect(seen.inHandler).toBeUndefined();
    expect(seen.enteredWhileR2Inside).toBe(false);
  });

  it('events$ subscribers see no caller lock', async () => {
    const { engine } = memory;
    const seenIn: (string | undefined)[] = [];
    const subscription = engine.events$.subscribe((event) => {
      if (event.type === 'renewed') seenIn.push(currentLock()?.key);
    });

    await engine.withLock('outer', async () => {
      const renewed = await engine.acquire('renewed', { ttl: 60 });
      await waitUntil('two renewals', () => seenIn.length >= 2);
      await renewed.release();
    });
    subscription.unsubscribe();

    expect(seenIn.every((key) => key === undefined)).toBe(true);
  });

  it('the canary: a plain timer armed inside a lock carries it', async () => {
    const { engine } = memory;
    const lock = await engine.acquire('held');
    const seen = await runHoldingLock(
      engine,
      lock,
      ['lock:held'],
      () => new Promise<Lock | undefined>((resolve) => setTimeout(() => resolve(currentLock()), 1)),
    );

    expect(seen?.key).toBe('held');
    await lock.release();
  });
});
