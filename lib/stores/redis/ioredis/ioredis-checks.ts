import {
  commandArgs,
  IOREDIS_TRICKS,
  ReadCommand,
  type IoredisClient,
  type IoredisInternals,
  type IoredisTrick,
} from './ioredis-internals.js';

/*
 * Which of the ioredis internals (ioredis-internals.ts) work with a client: checked once per
 * client, on a command that is never sent, and remembered; and `plainIoredis`, which turns them
 * off for the tests and the bench.
 */

/**
 * The property of a client that lists the uses to run plain on it. A registered symbol, so that
 * the bench, which sees only the package's entry points, can set it on its clients.
 */
export const PLAIN_IOREDIS = Symbol.for('nestjs-distributed-lock.plainIoredis');

const checked = new WeakMap<IoredisClient, IoredisInternals>();

/**
 * Makes the store built on `client` from now on use the plain fallback of `tricks` (all by
 * default): for tests and the bench, not the public API. Call it before building the store.
 */
export function plainIoredis(
  client: IoredisClient,
  tricks: readonly IoredisTrick[] = IOREDIS_TRICKS,
): void {
  (client as unknown as Record<symbol, unknown>)[PLAIN_IOREDIS] = [...tricks];
  checked.delete(client);
}

function plainOn(client: IoredisClient): ReadonlySet<unknown> {
  const tricks = (client as unknown as Record<symbol, unknown>)[PLAIN_IOREDIS];
  return new Set(Array.isArray(tricks) ? tricks : []);
}

/**
 * The uses that work with `client`, checked on first asking and then remembered; not
 * remembered while ioredis's `Command` is not loaded yet (see `loadIoredis`).
 */
export function internalsOf(client: IoredisClient): IoredisInternals {
  let internals = checked.get(client);
  if (!internals) {
    internals = Object.freeze(check(client, plainOn(client)));
    if (ReadCommand) checked.set(client, internals);
  }
  return internals;
}

function check(client: IoredisClient, off: ReadonlySet<unknown>): IoredisInternals {
  const own = typeof client.sendCommand === 'function';
  const readInParse = !off.has('readInParse') && own && commandsReadInParse();
  const single = !client.isCluster;
  return {
    readInParse,
    flatArgs: readInParse && !off.has('flatArgs') && commandTakesArgsAsGiven(),
    cork: !off.has('cork') && typeof queueMember(client, 'length') === 'number',
    failUnanswered:
      !off.has('failUnanswered') && typeof queueMember(client, 'toArray') === 'function',
    socket: !off.has('socket') && single,
  };
}

/** A member of a client's queue of the commands written and not answered, if it has one. */
function queueMember(client: IoredisClient, name: string): unknown {
  if (client.isCluster) return undefined;
  const { commandQueue } = client as unknown as { commandQueue?: Record<string, unknown> | null };
  return commandQueue?.[name];
}

let readsInParse: boolean | undefined;
let takesArgsAsGiven: boolean | undefined;

/**
 * Whether a command built here prefixes its keys, settles its promise through `transformReply`
 * in the step it is resolved, decodes the reply as asked, and can be failed: tried once on a
 * command that is never sent.
 */
function commandsReadInParse(): boolean {
  readsInParse ??= attempt(() => {
    let read: unknown;
    const options = { replyEncoding: 'utf8', keyPrefix: 'p:' } as const;
    const probe = new ReadCommand!('get', ['k'], options, (reply) => (read = reply)) as unknown as {
      args: unknown[];
      promise?: unknown;
      resolve?: unknown;
      reject?: unknown;
    };
    if (typeof probe.resolve !== 'function' || typeof probe.reject !== 'function') return false;
    (probe.resolve as (reply: Buffer) => void)(Buffer.from('v'));
    const { then } = (probe.promise ?? {}) as { then?: unknown };
    return probe.args[0] === 'p:k' && read === 'v' && typeof then === 'function';
  });
  return readsInParse ?? false;
}

/** Whether the `Command` constructor keeps the arguments it is given when `flat()` says so. */
function commandTakesArgsAsGiven(): boolean {
  takesArgsAsGiven ??= attempt(() => {
    const args = commandArgs(['k', 1], true);
    return (new ReadCommand!('set', args, {}) as unknown as { args: unknown }).args === args;
  });
  return takesArgsAsGiven ?? false;
}

/** The probe's answer once `Command` is loaded; undefined (ask again later) before. */
function attempt(probe: () => boolean): boolean | undefined {
  if (ReadCommand === undefined) return undefined;
  try {
    return probe();
  } catch {
    return false;
  }
}
