import {
  processIdOf,
  type LockProcess,
  type LockSummary,
  type StoreListOptions,
} from '../lock-inspection.interface.js';
import { COMPANION_SEPARATOR } from './redis-commands.js';
import type { RedisClientPort } from './redis-client.port.js';
import { ownersOf } from './owner-registry.js';
import { SUMMARY } from './scripts/inspection.scripts.js';

/**
 * Pages through the locks whose keys match, one page per SCAN reply: SCAN (never KEYS, which
 * would hold Redis for the whole keyspace), on every master of a Cluster in turn. Each page's
 * keys are read by one SUMMARY call each, sent together, and their owners by one MGET. SCAN's
 * guarantee holds: a lock held throughout is listed at least once; one taken or freed meanwhile
 * may or may not be. Companion keys (and registrations) are skipped.
 */
export async function* listLocks(
  port: RedisClientPort,
  { prefix, match, count }: StoreListOptions,
): AsyncGenerator<readonly LockSummary[]> {
  for await (const keys of port.scan(match, count)) {
    const lockKeys = keys.filter((key) => !key.includes(COMPANION_SEPARATOR));
    const page = await summaries(port, prefix, lockKeys);
    if (page.length > 0) yield page;
  }
}

async function summaries(
  port: RedisClientPort,
  prefix: string,
  keys: readonly string[],
): Promise<LockSummary[]> {
  const read = await Promise.all(
    keys.map((key) => port.script(SUMMARY, [key], [], (reply) => summaryOf(key, reply))),
  );
  const found = read.filter((summary): summary is LockSummary => summary !== undefined);
  const ids = found.flatMap(({ holder }) => (holder ? [holder.process] : []));
  if (ids.length === 0) return found;
  const owners = await ownersOf(port, prefix, ids);
  return found.map((summary) => {
    const owner = summary.holder && owners.get(summary.holder.process);
    return owner ? { ...summary, holder: { ...summary.holder!, owner } } : summary;
  });
}

/** SUMMARY's reply (see its comment) as a row; undefined when the key holds no lock. */
function summaryOf(key: string, reply: unknown): LockSummary | undefined {
  const [type, pttl] = reply as [string, number];
  if (type === 'string') {
    const value = (reply as string[])[2];
    const token = value.startsWith('turn:') ? value.slice('turn:'.length) : value;
    return {
      key,
      kind: 'mutex',
      holderCount: 1,
      ttl: pttl,
      holder: { process: processIdOf(token) },
    };
  }
  if (type !== 'zset') return undefined;
  const [, , live, last, first] = reply as [string, number, number, string, string];
  const holder: LockProcess = { process: processIdOf(first.slice(1)) };
  const kind = last.startsWith('L') ? 'semaphore' : 'read-write';
  return { key, kind, holderCount: live, ttl: pttl, holder };
}
