import { Cluster, type Redis } from 'ioredis';
import type { ClusterState, StoreHealth } from '../lock-store.interface.js';
import { timed } from '../store-health.js';
import { isAuthenticationRefusal } from '../store-refusals.js';

/** Statuses of a client that has lost its connection: a check would only wait in its queue. */
const DISCONNECTED: ReadonlySet<string> = new Set(['reconnecting', 'close', 'end']);

/**
 * One server's, Sentinel master's or Cluster's health: PING for the round trip, CLUSTER INFO
 * for a cluster's state, INFO (or CONFIG GET) for the eviction policy. Sent together, each
 * bounded by `timeout` ms. Down when PING gets no answer, or the cluster's state is not `ok`;
 * a connection that is down says why (`failure`), credentials Redis refused included.
 */
export async function redisHealth(
  client: Redis | Cluster,
  timeout: number,
  failure?: Error,
): Promise<StoreHealth> {
  if (DISCONNECTED.has(client.status)) {
    if (failure && isAuthenticationRefusal(failure)) {
      return { up: false, error: `Redis refused the credentials (${failure.message.trim()})` };
    }
    const why = failure ? `: ${failure.message.trim()}` : '';
    return { up: false, error: `not connected (${client.status})${why}` };
  }
  const [ping, state, evictionPolicy] = await Promise.all([
    timed(client.ping(), timeout),
    client instanceof Cluster ? clusterState(client, timeout) : undefined,
    maxmemoryPolicy(client, timeout),
  ]);
  if (!ping.ok) return { up: false, error: ping.error };
  const { roundTripMs } = ping;
  if (state === undefined) return { up: true, roundTripMs, evictionPolicy };
  const cluster = { state };
  if (state === 'ok') return { up: true, roundTripMs, cluster, evictionPolicy };
  const error = `cluster_state is ${state}`;
  return { up: false, roundTripMs, error, cluster, evictionPolicy };
}

async function clusterState(client: Cluster, timeout: number): Promise<ClusterState> {
  const info = await timed(client.cluster('INFO') as Promise<string>, timeout);
  const state = info.ok ? /cluster_state:(\w+)/.exec(info.value)?.[1] : undefined;
  return state === 'ok' || state === 'fail' ? state : 'unknown';
}

/** `unknown` when neither INFO nor CONFIG GET is allowed (see `evictionPolicyOf`), or late. */
async function maxmemoryPolicy(client: Redis | Cluster, timeout: number): Promise<string> {
  const reply = await timed(evictionPolicyOf(client), timeout);
  return (reply.ok ? reply.value : undefined) ?? 'unknown';
}

/**
 * The server's `maxmemory-policy`, from `INFO memory`, or from CONFIG GET where INFO is refused.
 * INFO first: managed Redis services disable CONFIG, and an ACL user is rarely granted
 * `+config|get` (each refusal would land in ACL LOG). Rejects, with both replies, when neither
 * is allowed.
 */
export async function evictionPolicyOf(client: Redis | Cluster): Promise<string | undefined> {
  try {
    const info = await client.info('memory');
    return /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  } catch (refused) {
    const reply = await client.config('GET', 'maxmemory-policy').catch((error: unknown) => {
      throw new Error(`INFO memory: ${messageOf(refused)}; CONFIG GET: ${messageOf(error)}`);
    });
    return (reply as string[])[1];
  }
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).trim();
}
