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

/** Every script's body by its SHA, so that an error reply's `@user_script:<line>` can be read. */
const bodies = new Map<string, string>();

export function lua(body: string): LuaScript {
  const sha = createHash('sha1').update(body).digest('hex');
  bodies.set(sha, body);
  return { body, sha };
}

/** Line `line` (1-based, as Redis counts it) of the script with this SHA, trimmed. */
export function scriptLine(sha: string, line: number): string | undefined {
  return bodies.get(sha)?.split('\n')[line - 1]?.trim();
}

/** The command that wakes a key's waiters: sharded Pub/Sub on Redis Cluster, plain elsewhere. */
export type PublishCommand = 'PUBLISH' | 'SPUBLISH';

/** A script whose text names the publish command, so the caller need not send it each time. */
export type PublishingScript = Readonly<Record<PublishCommand, LuaScript>>;

export function publishing(body: (publish: PublishCommand) => string): PublishingScript {
  return { PUBLISH: lua(body('PUBLISH')), SPUBLISH: lua(body('SPUBLISH')) };
}
