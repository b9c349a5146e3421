import type { Redis } from 'ioredis';

/** Calls per command so far, from `INFO commandstats` (includes NOSCRIPT-failed EVALSHAs). */
export async function commandCalls(client: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const match of (await client.info('commandstats')).matchAll(
    /^cmdstat_(\S+):calls=(\d+)/gm,
  )) {
    calls.set(match[1], Number(match[2]));
  }
  return calls;
}

/** Commands run between two `commandCalls` snapshots, leaving out the probes' own. */
export function callsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  ignore: readonly string[] = ['info', 'ping'],
): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [name, count] of after) {
    const ran = count - (before.get(name) ?? 0);
    if (ran > 0 && !ignore.includes(name)) delta[name] = ran;
  }
  return delta;
}

/** Pub/sub channels with at least one subscriber, server-wide. */
export function activeChannels(client: Redis): Promise<string[]> {
  return client.pubsub('CHANNELS') as Promise<string[]>;
}
