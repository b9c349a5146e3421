import type { RedisCluster } from './redis-cluster.js';

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
