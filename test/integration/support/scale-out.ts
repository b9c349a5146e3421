import type { RedisCluster } from '../../harness/redis-cluster.js';
import { infoOf } from '../../harness/redis-admin.js';

/** A lock name and the port of the master that serves its prefixed key. */
export interface PlacedName {
  readonly name: string;
  readonly master: number;
}

/**
 * `count` lock names (`stem:0`, `stem:1`, ...) whose prefixed keys are served by `count`
 * different masters, so a workload on them exercises every master and not just one.
 */
export async function namesOnDistinctMasters(
  cluster: RedisCluster,
  stem: string,
  count: number,
  prefix = 'lock:',
): Promise<PlacedName[]> {
  const placed = new Map<number, string>();
  for (let i = 0; placed.size < count; i++) {
    if (i > 200) throw new Error(`no ${count} names of "${stem}" on distinct masters`);
    const name = `${stem}:${i}`;
    const { port } = await cluster.masterForKey(prefix + name);
    if (!placed.has(port)) placed.set(port, name);
  }
  return [...placed].map(([master, name]) => ({ name, master }));
}

/**
 * Client connections open on these servers, not counting the one this call makes to ask. Read
 * before and after a module's life, it shows whether the module closed what it opened.
 */
export async function connectionCount(ports: readonly number[]): Promise<number> {
  const infos = await Promise.all(ports.map((port) => infoOf(port, 'clients')));
  return infos.reduce((sum, info) => sum + Number(info?.connected_clients ?? NaN) - 1, 0);
}

/** Nearest-rank percentile of ascending values. */
export function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)]!;
}

/** Resolves after `ms`. Only for pacing a workload, never to wait for a condition. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export { engineOn } from '../../harness/test-engine.js';
