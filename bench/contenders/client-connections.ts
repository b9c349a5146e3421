import type { GlideClient } from '@valkey/valkey-glide';
import type { Redis } from 'ioredis';
import { countingClients, tally } from '../command-counter.js';
import { connect, quit } from './connect.js';
import type { BenchClient } from './contender.js';

/**
 * The bench's node-redis and Valkey GLIDE connections, made as each library's README makes them,
 * with their commands tallied like ioredis's (command-counter.ts). The libraries are loaded on
 * first use: a run on ioredis alone never loads GLIDE's native core.
 */

export type NodeRedisClient = Awaited<ReturnType<typeof connectNodeRedis>>;

/** A connected node-redis client, as docs/compatibility.md shows it (no offline queue). */
export async function connectNodeRedis(url: string) {
  const redis = await import('redis');
  if (countingClients()) tallyNodeRedis(redis.RedisClient.prototype);
  const client = redis.createClient({ url, disableOfflineQueue: true });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

export async function closeNodeRedis(client: NodeRedisClient): Promise<void> {
  await client.close().catch(() => client.destroy());
}

/** A GLIDE client with its defaults (request timeout 250 ms; RESP3), connected. */
export async function connectGlide(url: string): Promise<GlideClient> {
  const glide = await import('@valkey/valkey-glide');
  // GLIDE's core logs each error reply (a script's first NOSCRIPT) to the console.
  glide.Logger.setLoggerConfig('error');
  if (countingClients()) tallyGlide(glide.BaseClient.prototype);
  const { hostname, port } = new URL(url);
  return glide.GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }] });
}

export async function closeGlide(client: GlideClient): Promise<void> {
  client.close();
}

const tallied = new WeakSet<object>();

/** Every node-redis command, typed or sent as is, passes through `sendCommand`. */
function tallyNodeRedis(prototype: object): void {
  if (tallied.has(prototype)) return;
  tallied.add(prototype);
  const proto = prototype as {
    sendCommand: (args: readonly unknown[], ...rest: unknown[]) => unknown;
  };
  const original = proto.sendCommand;
  proto.sendCommand = function (this: unknown, args, ...rest) {
    tally(String(args[0]).toLowerCase());
    return original.call(this, args, ...rest);
  };
}

/**
 * Every GLIDE request (a command, a script call) is written to its core by `writeOrBufferRequest`;
 * its name is in a protobuf message, so each counts as one request.
 */
function tallyGlide(prototype: object): void {
  if (tallied.has(prototype)) return;
  tallied.add(prototype);
  const proto = prototype as { writeOrBufferRequest: (...args: unknown[]) => unknown };
  const original = proto.writeOrBufferRequest;
  proto.writeOrBufferRequest = function (this: unknown, ...args) {
    tally('glide request');
    return original.apply(this, args);
  };
}

/** A connection of any of the three libraries, as the contenders built on it take it. */
export type BenchConnection =
  | { readonly kind: 'ioredis'; readonly client: Redis; close(): Promise<void> }
  | { readonly kind: 'node-redis'; readonly client: NodeRedisClient; close(): Promise<void> }
  | { readonly kind: 'glide'; readonly client: GlideClient; close(): Promise<void> };

export async function openConnection(kind: BenchClient, url: string): Promise<BenchConnection> {
  switch (kind) {
    case 'ioredis': {
      const client = await connect(url);
      return { kind, client, close: () => quit(client) };
    }
    case 'node-redis': {
      const client = await connectNodeRedis(url);
      return { kind, client, close: () => closeNodeRedis(client) };
    }
    case 'glide': {
      const client = await connectGlide(url);
      return { kind, client, close: () => closeGlide(client) };
    }
  }
}

/** One PING through the connection's own library: the round trip its commands pay. */
export function pingOf(connection: BenchConnection): () => Promise<unknown> {
  switch (connection.kind) {
    case 'ioredis':
      return () => connection.client.ping();
    case 'node-redis':
      return () => connection.client.ping();
    case 'glide':
      return () => connection.client.ping();
  }
}
