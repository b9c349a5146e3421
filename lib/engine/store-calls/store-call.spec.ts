import { jest } from '@jest/globals';
import { CallDeadlines, TimedCall } from './store-call.js';

/** A call that runs `onExpire` when its deadline passes. */
class NotedCall extends TimedCall {
  constructor(
    deadlines: CallDeadlines,
    private readonly onExpire: () => void,
  ) {
    super(deadlines);
  }

  expire(): void {
    this.onExpire();
  }
}

function startCall(deadlines: CallDeadlines, onExpire: () => void): TimedCall {
  const call = new NotedCall(deadlines, onExpire);
  deadlines.track(call);
  return call;
}

/** What the class keeps: calls still listed, and the slots of its reused array. */
function internals(deadlines: CallDeadlines): { listed: number; slots: number } {
  const inside = deadlines as unknown as { calls: unknown[]; first: number; end: number };
  return { listed: inside.end - inside.first, slots: inside.calls.length };
}

describe('CallDeadlines', () => {
  const MS = 100;
  let deadlines: CallDeadlines;
  let expired: string[];

  /** Starts a call named `name` that notes its expiry in `expired`. */
  function start(name: string): TimedCall {
    return startCall(deadlines, () => expired.push(name));
  }

  beforeEach(() => {
    // performance.now() is faked with the timers, so a deadline is hit at an exact fake time.
    jest.useFakeTimers();
    deadlines = new CallDeadlines(MS);
    expired = [];
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('expires unanswered calls in the order they started, each at its own deadline', () => {
    const a = start('a');
    jest.advanceTimersByTime(10);
    start('b');
    jest.advanceTimersByTime(10);
    start('c');

    jest.advanceTimersByTime(MS - 21);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    expect(a.done).toBe(false);
    jest.advanceTimersByTime(9);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
    jest.advanceTimersByTime(10);
    expect(expired).toEqual(['a', 'b', 'c']);
    jest.advanceTimersByTime(10 * MS);
    expect(expired).toEqual(['a', 'b', 'c']);
  });

  it('never expires a call that ended, and says so in `done`', () => {
    const a = start('a');
    const b = start('b');
    a.end();
    b.end();

    jest.advanceTimersByTime(10 * MS);
    expect(expired).toEqual([]);
    expect([a.done, b.done]).toEqual([true, true]);
  });

  it('copes with calls ended out of order: only the unanswered ones expire', () => {
    const calls = ['a', 'b', 'c', 'd', 'e'].map((name) => {
      const call = start(name);
      jest.advanceTimersByTime(1);
      return call;
    });
    calls[3].end();
    calls[0].end();
    calls[2].end();

    jest.advanceTimersByTime(MS);
    expect(expired).toEqual(['b', 'e']);
  });

  it('a call started after the oldest ended still expires at its own deadline, not earlier', () => {
    const a = start('a');
    jest.advanceTimersByTime(50);
    start('b');
    a.end();

    // The timer armed for `a` fires now and must move on to `b`'s deadline.
    jest.advanceTimersByTime(MS - 50);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(49);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['b']);
  });

  it('starts timing again after everything expired or ended', () => {
    start('a');
    jest.advanceTimersByTime(MS);
    const b = start('b');
    b.end();
    start('c');
    jest.advanceTimersByTime(MS - 1);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'c']);
  });

  it('an expired call that answers later is simply forgotten', () => {
    const a = start('a');
    jest.advanceTimersByTime(MS);
    a.end();
    start('b');
    jest.advanceTimersByTime(MS);

    expect(expired).toEqual(['a', 'b']);
    expect(internals(deadlines).listed).toBe(0);
  });

  it('keeps no ended calls: start/end cycles leave the list empty', () => {
    for (let i = 0; i < 10_000; i++) start(`c${i}`).end();

    // One slot, reused by every call.
    expect(internals(deadlines)).toEqual({ listed: 0, slots: 1 });
    jest.advanceTimersByTime(10 * MS);
    expect(expired).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('keeps the list short when calls answer in order while others are in flight', () => {
    const inFlight: TimedCall[] = [];
    let longest = 0;
    for (let i = 0; i < 10_000; i++) {
      inFlight.push(start(`c${i}`));
      if (inFlight.length > 10) inFlight.shift()!.end();
      longest = Math.max(longest, internals(deadlines).listed);
    }

    // Ten calls in flight; compaction lets some answered ones linger, never thousands.
    expect(longest).toBeLessThan(200);
    expect(internals(deadlines).slots).toBeLessThan(200);
    for (const call of inFlight) call.end();
    expect(internals(deadlines).listed).toBe(0);
    jest.advanceTimersByTime(10 * MS);
    expect(expired).toEqual([]);
  });

  it('keeps the list short when the oldest call hangs until it expires', () => {
    start('hung');
    for (let i = 0; i < 1_000; i++) start(`c${i}`).end();
    // The hung call holds the others behind it until its deadline...
    jest.advanceTimersByTime(MS);

    // ...and then they all go.
    expect(expired).toEqual(['hung']);
    expect(internals(deadlines).listed).toBe(0);
  });

  it('does not keep the process alive: its timer is unref-ed', () => {
    jest.useRealTimers();
    const real = new CallDeadlines(60_000);
    startCall(real, () => undefined);
    const timer = (real as unknown as { timer: NodeJS.Timeout }).timer;

    expect(timer.hasRef()).toBe(false);
    clearTimeout(timer);
  });
});
