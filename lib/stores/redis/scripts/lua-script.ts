import { createHash } from 'node:crypto';

/**
 * A Lua script of the Redis store, with its SHA for EVALSHA. Every script lives in this folder,
 * and touches only the keys it is given, so in Redis Cluster it runs on one slot as long as
 * those keys share a hash tag.
 */
export interface LuaScript {
  readonly body: string;
  readonly sha: string;
}

export function lua(body: string): LuaScript {
  return { body, sha: createHash('sha1').update(body).digest('hex') };
}

/** The command that wakes a key's waiters: sharded Pub/Sub on Redis Cluster, plain elsewhere. */
export type PublishCommand = 'PUBLISH' | 'SPUBLISH';

/** A script whose text names the publish command, so the caller need not send it each time. */
export type PublishingScript = Readonly<Record<PublishCommand, LuaScript>>;

export function publishing(body: (publish: PublishCommand) => string): PublishingScript {
  return { PUBLISH: lua(body('PUBLISH')), SPUBLISH: lua(body('SPUBLISH')) };
}
