import type { StoreHealth } from '../lock-store.interface.js';
import type { RedisLockStore } from '../redis/redis-lock.store.js';

/**
 * Redlock's health from its nodes', asked in parallel, each bounded by `timeout`: up while a
 * quorum answers, with the round trip in which a quorum had answered (what an acquire waits for).
 */
export async function quorumHealth(
  nodes: readonly RedisLockStore[],
  names: readonly string[],
  needed: number,
  timeout: number,
): Promise<StoreHealth> {
  const reports = await Promise.all(nodes.map((node) => node.health(timeout)));
  const reachable = reports.filter((report) => report.up);
  const quorum = { reachable: reachable.length, needed, nodes: reports.length };
  const evictionPolicy = worstPolicy(reachable);
  if (reachable.length >= needed) {
    const roundTrips = reachable.map((report) => report.roundTripMs ?? 0).sort((a, b) => a - b);
    return { up: true, roundTripMs: roundTrips[needed - 1], quorum, evictionPolicy };
  }
  const failed = reports.flatMap((report, i) =>
    report.up ? [] : [`${names[i]} (${report.error ?? 'down'})`],
  );
  const error =
    `${reachable.length} of ${reports.length} nodes answered, below the quorum of ${needed}. ` +
    `Failed: ${failed.join(', ')}.`;
  return { up: false, error, quorum, evictionPolicy };
}

/**
 * A policy that can evict, on any node that answered, is the one to warn of: that node's vote
 * can vanish under a holder. Then `unknown` if some node would not say; undefined if none answered.
 */
function worstPolicy(reports: readonly StoreHealth[]): string | undefined {
  const policies = reports.map((report) => report.evictionPolicy ?? 'unknown');
  const evicting = policies.find((policy) => policy !== 'noeviction' && policy !== 'unknown');
  return evicting ?? (policies.includes('unknown') ? 'unknown' : policies[0]);
}
