/*
 * How waiters wait: every timing rule of waiting and hand-off, with its default, in one place.
 * A leaf like the errors: the engine and the stores both follow it, and it imports nothing.
 * The terms are defined in docs/ARCHITECTURE.md's glossary.
 */

/** Longest sleep of a waiter that hears no release notification (ms). @default 1000 */
export const DEFAULT_POLL_CAP = 1_000;

/**
 * Most releases in a row handed straight to the next waiter in the same process (a local
 * hand-off, no store call) before one goes through the store, where other processes wait.
 */
export const DEFAULT_LOCAL_HANDOFFS = 16;

/**
 * How long a key given to a process in its turn stays reserved for it (ms). A process that died
 * or stopped waiting holds the others up no longer than this.
 */
export const TURN_GRACE = 500;

/** How long a key's list of waiters outlives its last arrival (ms); a live waiter re-arrives sooner. */
export const WAITERS_LIFETIME = 60_000;

/**
 * Most attempts a second that the waiters of one process make when no notification wakes them.
 * Past `POLLS_PER_SECOND × pollCap / 1000` keys waited on at once, their sleeps lengthen so
 * that together they stay within it: 10,000 waiting keys would otherwise send 10,000 commands a
 * second just to look, when the release notifications already wake them.
 */
export const POLLS_PER_SECOND = 200;

/** The longest sleep of a waiter while `waiting` keys are waited on in its process (ms). */
export function pollInterval(pollCap: number, waiting: number): number {
  return Math.max(pollCap, (waiting * 1000) / POLLS_PER_SECOND);
}

/**
 * A waiter's sleep after a failed attempt, when no notification wakes it first: until the
 * holder's lease ends (`pttl`; unknown when negative), capped at `pollCap`, plus jitter so that
 * waiters in several processes do not retry in step.
 */
export function fallbackDelay(pttl: number, pollCap: number): number {
  const base = pttl < 0 ? pollCap : Math.min(pttl, pollCap);
  return base + Math.random() * Math.min(50, 1 + base / 10);
}

/**
 * Redlock's retry after a split vote (too few nodes busy for anyone to hold a quorum, so no
 * release will come): a short random delay, so the candidates do not split again in step.
 */
export function splitVoteRetry(ttl: number): number {
  return Math.ceil(Math.random() * Math.min(50, ttl / 10));
}

/**
 * How long a failed write attempt holds new readers back (ms). The waiting writer renews it with
 * each attempt, which comes at least every `pollCap`; a writer that died or gave up frees the
 * readers after this.
 */
export function writerPatience(pollCap: number): number {
  return 2 * pollCap + 100;
}

/**
 * A store call pending this long (ms) is no longer a round trip: a wait that runs out while a
 * store call has gone unanswered for at least this long (and half the wait) fails as a store
 * error, not as contention.
 */
export const SLOW_STORE_MS = 100;
