/**
 * What the live page reads, once per tick, over server-sent events: an instance sends its own
 * snapshot, the `seckill:live` launcher sends the same shape with every instance in it.
 */

/** Upper bounds (ms) of the lock wait and hold histograms' buckets; the last is open-ended. */
export const HISTOGRAM_BOUNDS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000];

/** The product the live page follows until another is chosen on it (`?product=`). */
export const LIVE_PRODUCT_ID = 1;

/** How often a stream sends a snapshot. */
export const LIVE_TICK_MS = 250;

/** A product as Redis holds it: `initial` is the stock it was last reset to. */
export interface ProductCounts {
  readonly id: number;
  readonly stock: number;
  readonly initial: number;
  readonly orders: number;
}

/** One app instance's counters since it started (the page takes the differences). */
export interface InstanceSnapshot {
  readonly name: string;
  readonly pid: number;
  /** `up`, `Redis down`, and from the launcher also `paused`, `not answering`. */
  readonly state: string;
  /** Answers of the buy endpoints, by `<endpoint> <status>[ <code>]`, e.g. `buy 409 SOLD_OUT`. */
  readonly answers: Readonly<Record<string, number>>;
  /** Product-lock waits and holds, counted per bucket of HISTOGRAM_BOUNDS_MS (one more: above). */
  readonly wait: readonly number[];
  readonly hold: readonly number[];
  /** Locks this process holds right now. */
  readonly held: number;
}

/** A sale the launcher runs; `id` changes with each, so the page knows when to start counting anew. */
export interface SaleState {
  readonly id: number;
  readonly endpoint: string;
  /** The product sold: the one the page followed when the sale was started. */
  readonly productId: number;
  readonly running: boolean;
  readonly startedAt: number;
}

/** One line of the page's log: what a control did, in words. */
export interface LogLine {
  readonly at: number;
  readonly text: string;
  readonly tone: 'info' | 'good' | 'bad';
}

export interface LiveSnapshot {
  readonly at: number;
  /** Whether the page's controls work: only under the launcher, which owns the processes. */
  readonly controls: boolean;
  readonly bounds: readonly number[];
  /** Null while Redis does not answer. */
  readonly product: ProductCounts | null;
  readonly instances: readonly InstanceSnapshot[];
  readonly sale: SaleState | null;
  readonly log: readonly LogLine[];
}
