import { jest } from '@jest/globals';
import { WakeLatch } from './wake-latch.js';

/** Tracks whether a promise has settled, without awaiting it. */
function track(promise: Promise<void>): { readonly settled: boolean } {
  const state = { settled: false };
  promise.then(() => (state.settled = true));
  return state;
}

function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('WakeLatch', () => {
  let latch: WakeLatch;

  beforeEach(() => {
    // Fake timers tell "woken by notify" apart from "woken by the timeout" without racing a clock.
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick', 'setImmediate'] });
    latch = new WakeLatch();
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('keeps a notification that arrives while nobody waits, so the next wait returns at once', async () => {
    latch.notify();

    const waiting = track(latch.wait(60_000));
    await flushMicrotasks();

    expect(waiting.settled).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('hands a kept notification to one wait only, and several notifications collapse into one', async () => {
    latch.notify();
    latch.notify();
    await latch.wait(60_000);

    const second = track(latch.wait(1_000));
    await flushMicrotasks();

    expect(second.settled).toBe(false);
  });

  it('wakes a pending wait on notify, before its timeout, and cancels its timer', async () => {
    const waiting = track(latch.wait(60_000));
    await flushMicrotasks();
    expect(waiting.settled).toBe(false);
    expect(jest.getTimerCount()).toBe(1);

    latch.notify();
    await flushMicrotasks();

    expect(waiting.settled).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('does not keep a notification that already woke a wait', async () => {
    const first = latch.wait(60_000);
    latch.notify();
    await first;

    const second = track(latch.wait(1_000));
    await flushMicrotasks();

    expect(second.settled).toBe(false);
  });

  it('returns after ms at the latest when no notification comes', async () => {
    const waiting = track(latch.wait(1_000));

    jest.advanceTimersByTime(999);
    await flushMicrotasks();
    expect(waiting.settled).toBe(false);

    jest.advanceTimersByTime(1);
    await flushMicrotasks();
    expect(waiting.settled).toBe(true);
  });

  it('keeps a notification that arrives after a wait timed out', async () => {
    const timedOut = latch.wait(100);
    jest.advanceTimersByTime(100);
    await timedOut;

    latch.notify();
    const next = track(latch.wait(60_000));
    await flushMicrotasks();

    expect(next.settled).toBe(true);
  });

  it('forgets a kept notification on clear()', async () => {
    latch.notify();
    latch.clear();

    const waiting = track(latch.wait(1_000));
    await flushMicrotasks();

    expect(waiting.settled).toBe(false);
  });
});
