import type { ExtendResult, LeaseExtension } from '../lock-store.interface.js';
import { clusterSlot } from './cluster-slot.js';
import type { CommandSender, RedisArg } from './command-sender.js';
import { runScript } from './script-runner.js';
import { extendOutcome, memberLetter } from './script-replies.js';
import { EXTEND } from './scripts/release.scripts.js';

/**
 * Re-arms many leases, of mutexes and holder sets alike, in one EXTEND call; on a cluster, one
 * call per slot. A lease of several keys gets the worst of its keys' results.
 */
export async function extendLeases(
  send: CommandSender,
  cluster: boolean,
  leases: readonly LeaseExtension[],
): Promise<ExtendResult[]> {
  const batches = cluster ? bySlot(leases) : [leases];
  const perKey = await Promise.all(batches.map((batch) => extendBatch(send, batch)));
  const results = new Map(perKey.flat());
  return leases.map((lease) => {
    const worst = Math.min(...lease.keys.map((key) => results.get(`${lease.token}\n${key}`)!));
    return extendOutcome[worst as 1 | 0 | -1];
  });
}

async function extendBatch(
  send: CommandSender,
  batch: readonly LeaseExtension[],
): Promise<[string, number][]> {
  const keys = batch.flatMap((lease) => lease.keys);
  const tokens = batch.flatMap((lease) => lease.keys.map(() => lease.token));
  const members = batch.flatMap((lease) => lease.keys.map(() => memberOf(lease)));
  const ttls = batch.flatMap((lease) => lease.keys.map(() => lease.ttl));
  const args: RedisArg[] = [...members, ...ttls];
  // Holder sets say so; a batch of mutexes only (the common case) leaves that off.
  if (members.some((member, i) => member !== tokens[i])) {
    args.push(...batch.flatMap((lease) => lease.keys.map(() => (isMutex(lease) ? '0' : '1'))));
  }
  const codes = (await runScript(send, EXTEND, keys, args)) as number[];
  return codes.map((code, i) => [`${tokens[i]}\n${keys[i]}`, code]);
}

function bySlot(leases: readonly LeaseExtension[]): LeaseExtension[][] {
  const groups = new Map<number, LeaseExtension[]>();
  for (const lease of leases) {
    const slot = clusterSlot(lease.keys[0]);
    const group = groups.get(slot);
    if (group) group.push(lease);
    else groups.set(slot, [lease]);
  }
  return [...groups.values()];
}

function isMutex({ kind }: LeaseExtension): boolean {
  return kind === undefined || kind.type === 'mutex';
}

/** A lease's entry in its key: the token for a mutex, its member in a holder set otherwise. */
function memberOf(lease: LeaseExtension): string {
  const { kind } = lease;
  return kind === undefined || kind.type === 'mutex'
    ? lease.token
    : memberLetter[kind.type] + lease.token;
}
