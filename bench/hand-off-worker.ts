/**
 * A process of scenario 10's hand-off: one LockService of the build the parent names (this
 * checkout's dist/, or the baseline's), holding or waiting for one key at a time. The parent
 * sends `init` ({ url, build }); then, for each hand-off, `hold` ({ key }) to the holder and
 * `wait` ({ key }) to the waiter, answered once the waiter's first attempt found the key busy;
 * `mark` to the waiter, then `release` to the holder, answered with the moment the release was
 * called, how long it took and the holder's CPU time meanwhile; `report` to the waiter, answered
 * with the moment it was granted and its CPU time since `mark`; `drop`, which gives the key
 * back; and finally `exit`. Times are ms since the epoch with sub-ms precision
 * (performance.timeOrigin + now()), comparable between processes on one machine.
 */
import { pathToFileURL } from 'node:url';
import type { Lock, LockService } from '../dist/index.js';
import { connect, quit } from './contenders/connect.js';
import { serveParent, type Message } from './worker-pool.js';

const TTL = 30_000;
/** Far longer than a hand-off: a waiter that gives up has missed its notification. */
const WAIT = 10_000;

interface Grant {
  readonly lock: Lock;
  readonly at: number;
  readonly cpuUs: number;
}

let service: LockService | undefined;
let client: Awaited<ReturnType<typeof connect>> | undefined;
let held: Lock | undefined;
let granted: Promise<Grant> | undefined;
let markedAt: NodeJS.CpuUsage | undefined;

const now = (): number => performance.timeOrigin + performance.now();
const cpuUsSince = (since?: NodeJS.CpuUsage): number => {
  const { user, system } = process.cpuUsage(since);
  return user + system;
};

async function handle(message: Message): Promise<Message> {
  switch (message.type) {
    case 'init': {
      // Both builds are ES module packages, so tsx loads either as it is.
      const entry = pathToFileURL(`${String(message.build)}/dist/index.js`).href;
      const build = (await import(entry)) as { LockService: typeof LockService };
      client = await connect(String(message.url));
      service = new build.LockService({ redis: client });
      await service.onModuleInit();
      return { type: 'ready' };
    }
    case 'hold':
      held = await service!.acquire(String(message.key), { ttl: TTL, wait: 0 });
      return { type: 'held' };
    case 'wait':
      await waitFor(String(message.key));
      return { type: 'waiting' };
    case 'mark':
      markedAt = process.cpuUsage();
      return { type: 'marked' };
    case 'release': {
      const cpu = process.cpuUsage();
      const at = now();
      await held!.release();
      const releaseMs = now() - at;
      return { type: 'released', at, releaseMs, cpuUs: cpuUsSince(cpu) };
    }
    case 'report': {
      const { at, cpuUs } = await granted!;
      return { type: 'granted', at, cpuUs };
    }
    case 'drop':
      await (await granted!).lock.release();
      return { type: 'dropped' };
    case 'exit':
      await service?.onApplicationShutdown();
      if (client) await quit(client);
      process.exit(0);
  }
  throw new Error(`unknown message "${message.type}"`);
}

/** Starts waiting for `key`; resolves once the first attempt found it busy. */
async function waitFor(key: string): Promise<void> {
  let contended!: () => void;
  const busy = new Promise<void>((resolve) => (contended = resolve));
  const watching = service!.events$.subscribe((event) => {
    if (event.type === 'contended' && event.key === key) contended();
  });
  granted = service!
    .acquire(key, { ttl: TTL, wait: WAIT })
    .then((lock) => ({ lock, at: now(), cpuUs: cpuUsSince(markedAt) }));
  try {
    const first = await Promise.race([busy.then(() => 'busy'), granted.then(() => 'granted')]);
    if (first === 'granted') throw new Error(`${key} was free: the holder did not hold it`);
  } finally {
    watching.unsubscribe();
  }
}

serveParent(handle);
