import { jest } from '@jest/globals';

/**
 * The wall clock (`Date.now()`) of this test file and everything it loads, including the
 * library, with a settable offset: an NTP step or a VM restored from a snapshot, in one line.
 * The monotonic clock (`performance.now()`, timers) keeps running as it does on a real host.
 */
export interface JumpingClock {
  /** Moves the wall clock by `ms` (negative: back) from where it is now. */
  jump(ms: number): void;
  readonly offset: number;
}

/** Installs the clock for each test of the enclosing `describe` and restores `Date.now` after. */
export function useJumpingClock(): JumpingClock {
  let offset = 0;
  let spy: { mockRestore(): void } | undefined;
  beforeEach(() => {
    offset = 0;
    const realNow = Date.now.bind(Date);
    spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
  });
  afterEach(() => {
    spy?.mockRestore();
    spy = undefined;
  });
  return {
    jump: (ms) => void (offset += ms),
    get offset() {
      return offset;
    },
  };
}
