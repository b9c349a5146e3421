import { errorReply } from '../../store-refusals.js';

/*
 * node-redis's errors as the store reads them, its closing, and where it connects, for the
 * node-redis adapter (node-redis.adapter.ts).
 */

/** The members of a node-redis client, Sentinel client or Cluster the adapter uses. */
export interface NodeRedisClientLike {
  sendCommand(...args: unknown[]): Promise<unknown>;
  readonly isOpen: boolean;
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  duplicate(overrides?: object): NodeRedisClientLike;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
  subscribe?(
    channel: string,
    listener: (message: string, channel: string) => void,
  ): Promise<unknown>;
  unsubscribe?(channel: string): Promise<unknown>;
  sSubscribe?(
    channel: string,
    listener: (message: string, channel: string) => void,
  ): Promise<unknown>;
  sUnsubscribe?(channel: string): Promise<unknown>;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
  destroy?(): unknown;
  readonly options?: object;
  readonly masters?: readonly object[];
  nodeClient?(node: object): Promise<NodeRedisClientLike> | NodeRedisClientLike;
}

/** node-redis's error replies: `SimpleError` and `BlobError`, both an `ErrorReply`. */
const REPLY_CLASSES: ReadonlySet<string> = new Set(['ErrorReply', 'SimpleError', 'BlobError']);

/** An error reply of node-redis in the adapters' shape (see ERROR_REPLY); any other as is. */
export function asErrorReply(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  for (let type = error.constructor; type && type !== Error; type = Object.getPrototypeOf(type)) {
    if (REPLY_CLASSES.has(type.name)) return errorReply(error.message, error);
  }
  return error;
}

/** How long a polite close may take before the connection is dropped. */
const CLOSE_WAIT_MS = 1_000;

/** Closes a client we own: politely when it is up, at once when it is down or reconnecting. */
export async function closeNodeRedis(client: NodeRedisClientLike): Promise<void> {
  if (!client.isOpen) return;
  if (!client.isReady) {
    await Promise.resolve(client.destroy?.()).catch(() => undefined);
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, CLOSE_WAIT_MS, 'late');
  });
  const closing = (client.close ?? client.quit)!.call(client).then(
    () => 'closed' as const,
    () => 'failed' as const,
  );
  if ((await Promise.race([closing, late])) !== 'closed') {
    await Promise.resolve(client.destroy?.()).catch(() => undefined);
  }
  clearTimeout(timer);
}

interface NodeRedisOptions {
  readonly url?: string;
  readonly socket?: { host?: string; port?: number; path?: string; tls?: unknown };
  readonly database?: number;
  readonly rootNodes?: readonly NodeRedisOptions[];
  readonly name?: string;
  readonly sentinelRootNodes?: readonly { host?: string; port?: number }[];
}

/** Where a node-redis client connects, for logs: never its credentials. */
export function endpointOfNodeRedis(client: NodeRedisClientLike, cluster: boolean): string {
  const options = (client.options ?? {}) as NodeRedisOptions;
  if (cluster) {
    const nodes = (options.rootNodes ?? []).map(addressOf).join(',');
    return `redis cluster${nodes ? ` ${nodes}` : ''} (node-redis)`;
  }
  if (options.sentinelRootNodes) {
    const via = options.sentinelRootNodes.map(({ host, port }) => `${host}:${port}`).join(',');
    return `redis sentinel "${options.name}" via ${via} (node-redis)`;
  }
  return `${addressOf(options)} (node-redis)`;
}

function addressOf({ url, socket, database }: NodeRedisOptions): string {
  if (url) {
    try {
      const parsed = new URL(url);
      const db = parsed.pathname.length > 1 ? parsed.pathname : '';
      return `${parsed.protocol}//${parsed.hostname}:${parsed.port || 6379}${db}`;
    } catch {
      return 'redis (an unreadable URL)';
    }
  }
  if (socket?.path) return `redis unix:${socket.path}`;
  const scheme = socket?.tls ? 'rediss' : 'redis';
  const db = database ? `/${database}` : '';
  return `${scheme}://${socket?.host ?? 'localhost'}:${socket?.port ?? 6379}${db}`;
}
