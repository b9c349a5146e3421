import type { ClusterState, StoreHealth } from '../lock-store.interface.js';
import { timed } from '../store-health.js';
import { isAuthenticationRefusal } from '../store-refusals.js';
import type { RedisClientPort } from './redis-client.port.js';

/**
 * One server's, Sentinel master's or Cluster's health: PING for the round trip, CLUSTER INFO
 * for a cluster's state, INFO (or CONFIG GET) for the eviction policy. Sent together, each
 * bounded by `timeout` ms. Down when PING gets no answer, or the cluster's state is not `ok`;
 * a connection that is down says why (`failure`), credentials Redis refused included.
 */
export async function redisHealth(
  port: RedisClientPort,
  timeout: number,
  failure?: Error,
): Promise<StoreHealth> {
  // A connection that is down: a check would only wait in the client's queue.
  if (port.status() === 'closed') {
    if (failure && isAuthenticationRefusal(failure)) {
      return { up: false, error: `Redis refused the credentials (${failure.message.trim()})` };
    }
    const why = failure ? `: ${failure.message.trim()}` : '';
    return { up: false, error: `not connected${why}` };
  }
  const [ping, state, evictionPolicy] = await Promise.all([
    timed(port.send('ping', []), timeout),
    port.cluster ? clusterState(port, timeout) : undefined,
    maxmemoryPolicy(port, timeout),
  ]);
  if (!ping.ok) return { up: false, error: ping.error };
  const { roundTripMs } = ping;
  if (state === undefined) return { up: true, roundTripMs, evictionPolicy };
  const cluster = { state };
  if (state === 'ok') return { up: true, roundTripMs, cluster, evictionPolicy };
  const error = `cluster_state is ${state}`;
  return { up: false, roundTripMs, error, cluster, evictionPolicy };
}

async function clusterState(port: RedisClientPort, timeout: number): Promise<ClusterState> {
  const info = await timed(port.send('cluster', ['INFO']) as Promise<string>, timeout);
  const state = info.ok ? /cluster_state:(\w+)/.exec(info.value)?.[1] : undefined;
  return state === 'ok' || state === 'fail' ? state : 'unknown';
}

/** `unknown` when neither INFO nor CONFIG GET is allowed (see `evictionPolicyOf`), or late. */
async function maxmemoryPolicy(port: RedisClientPort, timeout: number): Promise<string> {
  const reply = await timed(evictionPolicyOf(port), timeout);
  return (reply.ok ? reply.value : undefined) ?? 'unknown';
}

/**
 * The server's `maxmemory-policy`, from `INFO memory`, or from CONFIG GET where INFO is refused.
 * INFO first: managed Redis services disable CONFIG, and an ACL user is rarely granted
 * `+config|get` (each refusal would land in ACL LOG). Rejects, with both replies, when neither
 * is allowed.
 */
export async function evictionPolicyOf(port: RedisClientPort): Promise<string | undefined> {
  try {
    const info = String(await port.send('info', ['memory']));
    return /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  } catch (refused) {
    const reply = await port.send('config', ['GET', 'maxmemory-policy']).catch((error: unknown) => {
      throw new Error(`INFO memory: ${messageOf(refused)}; CONFIG GET: ${messageOf(error)}`);
    });
    return configValue(reply);
  }
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).trim();
}

/** CONFIG GET's reply: an array of name and value (RESP2), or a map of them (RESP3). */
function configValue(reply: unknown): string | undefined {
  if (Array.isArray(reply)) return reply[1] as string | undefined;
  if (reply instanceof Map) return [...reply.values()][0] as string | undefined;
  return Object.values(reply as Record<string, string>)[0];
}
