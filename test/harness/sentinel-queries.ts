import { tryAdminCall } from './redis-admin.js';

/** SENTINEL replies list an instance's fields as flat [name, value, ...] pairs. */
function fieldsOf(flat: unknown): Record<string, string> {
  const list = Array.isArray(flat) ? (flat as string[]) : [];
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) fields[list[i]!] = list[i + 1]!;
  return fields;
}

/** SENTINEL replicas <name> as records (port, flags, ...); undefined if the sentinel is down. */
export async function sentinelReplicas(
  sentinelPort: number,
  name: string,
): Promise<Record<string, string>[] | undefined> {
  const reply = await tryAdminCall(sentinelPort, ['SENTINEL', 'replicas', name]);
  return Array.isArray(reply) ? reply.map(fieldsOf) : undefined;
}

/** The master port this sentinel currently reports for `name`; undefined if it does not answer. */
export async function sentinelMasterPort(
  sentinelPort: number,
  name: string,
): Promise<number | undefined> {
  const reply = await tryAdminCall(sentinelPort, ['SENTINEL', 'get-master-addr-by-name', name]);
  return Array.isArray(reply) ? Number(reply[1]) : undefined;
}

/**
 * True when the sentinel sees exactly `replicaPorts` as healthy replicas and SENTINEL ckquorum
 * says the quorum and a failover majority are reachable (so it has found the other sentinels).
 */
export async function sentinelReady(
  sentinelPort: number,
  name: string,
  replicaPorts: number[],
): Promise<boolean> {
  const quorum = await tryAdminCall(sentinelPort, ['SENTINEL', 'ckquorum', name]);
  const healthy = (await sentinelReplicas(sentinelPort, name))
    ?.filter((replica) => replica.flags === 'slave')
    .map((replica) => Number(replica.port));
  const expected = [...replicaPorts].sort();
  return String(quorum).startsWith('OK') && healthy?.sort().join() === expected.join();
}
