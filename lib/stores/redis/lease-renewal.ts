import type { ExtendResult, LeaseExtension } from '../lock-store.interface.js';
import { clusterSlot } from './cluster-slots.js';
import { extendOutcome, memberLetter } from './redis-commands.js';
import type { RedisArg, RedisClientPort } from './redis-client.port.js';
import { EXTEND } from './scripts/release.scripts.js';

/**
 * Most keys one EXTEND call carries: a script holds Redis for the whole call, and no command of
 * ours may hold a Redis others share for more than about 2 ms (the bench measures it).
 */
export const EXTEND_SLICE = 50;

/**
 * Re-arms many leases, of mutexes and holder sets alike: one EXTEND call per slice of at most
 * `EXTEND_SLICE` keys (on a cluster, of one slot), one after another. A lease of several keys
 * gets the worst of its keys' results.
 */
export async function extendLeases(
  port: RedisClientPort,
  leases: readonly LeaseExtension[],
): Promise<ExtendResult[]> {
  const results = new Array<ExtendResult>(leases.length);
  // One slice in flight at a time: Redis runs every command it has read from a connection before
  // it serves the next one, so slices sent together would hold it up together.
  for (const slice of slices(port.cluster, leases)) {
    await extendSlice(port, leases, slice, results);
  }
  return results;
}

/** The indices of the leases, cut into slices of at most `EXTEND_SLICE` keys (of one slot). */
function slices(cluster: boolean, leases: readonly LeaseExtension[]): number[][] {
  const all: number[][] = [];
  for (const group of cluster ? bySlot(leases) : [leases.map((_, i) => i)]) {
    let slice: number[] = [];
    let keys = 0;
    for (const i of group) {
      const count = leases[i]!.keys.length;
      if (keys + count > EXTEND_SLICE && slice.length > 0) {
        all.push(slice);
        slice = [];
        keys = 0;
      }
      slice.push(i);
      keys += count;
    }
    all.push(slice);
  }
  return all;
}

/** One EXTEND call for the leases at `indices`; their results go to the same places. */
async function extendSlice(
  port: RedisClientPort,
  leases: readonly LeaseExtension[],
  indices: readonly number[],
  results: ExtendResult[],
): Promise<void> {
  const keys: string[] = [];
  const members: RedisArg[] = [];
  const ttls: RedisArg[] = [];
  const sets: RedisArg[] = [];
  for (const i of indices) {
    const lease = leases[i]!;
    const member = memberOf(lease);
    for (const key of lease.keys) {
      keys.push(key);
      members.push(member);
      ttls.push(lease.ttl);
      sets.push(member === lease.token ? '0' : '1');
    }
  }
  // One ttl for all when they agree, and holder sets say so: a call of mutexes with one ttl
  // (the common case) sends a key and a token per lease, and nothing more.
  const sameTtl = ttls.every((ttl) => ttl === ttls[0]);
  const args = [...members, ...(sameTtl ? [ttls[0]!] : ttls)];
  if (sets.includes('1')) args.push(...sets);
  const codes = await port.script<number[]>(EXTEND, keys, args);
  let code = 0;
  for (const i of indices) {
    let worst = 1;
    for (let k = leases[i]!.keys.length; k > 0; k--) worst = Math.min(worst, codes[code++]!);
    results[i] = extendOutcome[worst as 1 | 0 | -1];
  }
}

/** The indices of the leases, grouped by the slot of their keys (one slot per lease). */
function bySlot(leases: readonly LeaseExtension[]): number[][] {
  const groups = new Map<number, number[]>();
  leases.forEach((lease, i) => {
    const slot = clusterSlot(lease.keys[0]!);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  });
  return [...groups.values()];
}

/** A lease's entry in its key: the token for a mutex, its member in a holder set otherwise. */
function memberOf(lease: LeaseExtension): string {
  const { kind } = lease;
  return kind === undefined || kind.type === 'mutex'
    ? lease.token
    : memberLetter[kind.type] + lease.token;
}
