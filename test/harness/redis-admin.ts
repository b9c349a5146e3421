import { Redis } from 'ioredis';

/**
 * Runs one command on one loopback node over a fresh connection that never retries, so a dead
 * or paused node fails the call within `timeoutMs` instead of queueing it. Meant for polling
 * topology (CLUSTER NODES, INFO, SENTINEL ...), not for traffic under test.
 */
export async function adminCall(
  port: number,
  args: readonly (string | number)[],
  timeoutMs = 1_000,
): Promise<unknown> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    protocol: 2, // plain RESP2 replies, and no HELLO round trip per call
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    enableReadyCheck: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const [command, ...rest] = args;
    return await client.call(String(command), rest);
  } finally {
    client.disconnect();
  }
}

/** Like adminCall, but undefined instead of an error: a node that is down is a normal answer. */
export async function tryAdminCall(
  port: number,
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await adminCall(port, args);
  } catch {
    return undefined;
  }
}

/** `field:value` lines (INFO, CLUSTER INFO) as a record; section headers and blanks dropped. */
export function parseInfo(text: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of String(text ?? '').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields[line.slice(0, colon)] = line.slice(colon + 1);
  }
  return fields;
}

/** INFO <section> of one node, parsed; undefined when the node does not answer. */
export async function infoOf(
  port: number,
  section: string,
): Promise<Record<string, string> | undefined> {
  const text = await tryAdminCall(port, ['INFO', section]);
  return text === undefined ? undefined : parseInfo(text);
}

/**
 * Client connections open on these servers, not counting the one this call makes to ask. Read
 * before and after a module's life, it shows whether the module closed what it opened.
 */
export async function connectionCount(ports: readonly number[]): Promise<number> {
  const infos = await Promise.all(ports.map((port) => infoOf(port, 'clients')));
  return infos.reduce((sum, info) => sum + Number(info?.connected_clients ?? NaN) - 1, 0);
}
