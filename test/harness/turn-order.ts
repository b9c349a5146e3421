import type { StoreRecord } from './recording-store.js';

/** Consecutive locked sections under one lease (one store acquisition plus local hand-offs). */
export interface Batch {
  readonly store: string;
  readonly token: string;
  readonly sections: number;
  /** Log index of the batch's first section. */
  readonly firstAt: number;
  /** Log index at which the release that ended the batch was sent (-1 if none was). */
  readonly releaseAt: number;
}

/** A moment a store's queue was surely in the key's turn list on the server. */
export interface LineEntry {
  readonly store: string;
  readonly at: number;
  readonly why: 'failed in turn' | 'requeued';
}

/** The batches of a log, in order; sections must have been logged with `kind: 'section'`. */
export function batchesOf(log: readonly StoreRecord[]): Batch[] {
  const batches: { store: string; token: string; sections: number; firstAt: number }[] = [];
  log.forEach((record, at) => {
    if (record.kind !== 'section') return;
    const last = batches.at(-1);
    if (last?.token === record.token) last.sections++;
    else batches.push({ store: record.store, token: record.token, sections: 1, firstAt: at });
  });
  return batches.map((batch) => ({
    ...batch,
    releaseAt: log.findIndex((r) => r.kind === 'release' && r.token === batch.token),
  }));
}

/**
 * When each store's queue was in line: an attempt made in turn failed (the script put the queue
 * in the list before answering), or a release put the releasing queue back in line and gave the
 * key to another queue (a release that kept a waiter and set no successor did exactly that).
 */
export function lineEntriesOf(log: readonly StoreRecord[]): LineEntry[] {
  const entries: LineEntry[] = [];
  log.forEach((record, at) => {
    if (record.kind === 'attempt' && record.queue !== undefined && !record.acquired) {
      entries.push({ store: record.store, at, why: 'failed in turn' });
    }
    if (
      record.kind === 'released' &&
      record.requeue !== undefined &&
      record.report.result === 'released' &&
      !record.report.succeeded
    ) {
      entries.push({ store: record.store, at, why: 'requeued' });
    }
  });
  return entries;
}

/**
 * Checks that turns go around: once a store's queue is in line, the batches released before
 * that store's next section belong to other stores, each at most once (so at most one batch of
 * every other store goes ahead of it). Returns a description of every entry that saw otherwise.
 */
export function turnViolations(log: readonly StoreRecord[]): string[] {
  const batches = batchesOf(log);
  const violations: string[] = [];
  for (const entry of lineEntriesOf(log)) {
    const next = log.findIndex(
      (record, at) => at > entry.at && record.kind === 'section' && record.store === entry.store,
    );
    if (next < 0) {
      violations.push(`${entry.store} (${entry.why} at ${entry.at}) never got the lock`);
      continue;
    }
    const ahead = batches
      .filter((batch) => batch.releaseAt > entry.at && batch.releaseAt < next)
      .map((batch) => batch.store);
    if (ahead.includes(entry.store) || new Set(ahead).size !== ahead.length) {
      violations.push(
        `${entry.store} (${entry.why} at ${entry.at}) waited behind batches of ${ahead.join(', ')}`,
      );
    }
  }
  return violations;
}

/**
 * Leases per store while every store of `stores` wanted the lock: from the moment the last of
 * them first stood in line to the last section of the store that finished first.
 */
export function sharesWhileAllWait(
  log: readonly StoreRecord[],
  stores: readonly string[],
): Record<string, number> {
  const entries = lineEntriesOf(log);
  const from = Math.max(...stores.map((s) => entries.find((e) => e.store === s)?.at ?? Infinity));
  const lastSection = (s: string): number =>
    log.reduce((last, r, at) => (r.kind === 'section' && r.store === s ? at : last), -1);
  const to = Math.min(...stores.map(lastSection));
  const shares = Object.fromEntries(stores.map((s) => [s, 0]));
  for (const batch of batchesOf(log)) {
    if (batch.firstAt > from && batch.firstAt <= to) shares[batch.store]++;
  }
  return shares;
}
