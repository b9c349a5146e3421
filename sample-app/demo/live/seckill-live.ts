import { Redis } from 'ioredis';
import { parseArgs } from 'node:util';
import { whenParentDies } from '../../../tools/parent-death.js';
import { InstanceFeed } from './instance-feed.js';
import { LiveControls } from './live-controls.js';
import { LiveHub } from './live-hub.js';
import { startLiveStack, type LiveStack } from './live-stack.js';

const usage = `npm run seckill:live -- [--port 0] [--stock 100] [--users 2000] [--concurrency 150]
                             [--think-ms 20] [--lease-ms 1500]

Starts a throwaway Redis and 3 instances of the sample app, and prints the URL of a page that
shows a flash sale live: start sales with the lock, without it, or as one Lua script, pause an
instance, restart Redis. Ctrl-C, or SIGTERM to npm or to this process, stops everything it started;
the servers die with it even of kill -9 (on Linux). --port 0 takes a free port.`;

const numeric = ['port', 'stock', 'users', 'concurrency', 'think-ms', 'lease-ms'] as const;

function readOptions(): Record<(typeof numeric)[number], number> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      stock: { type: 'string', default: '100' },
      users: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '150' },
      // A think time, so that a pause of a holder lands before its write; a lease shorter than
      // the 2 s pause, so that the holder loses it.
      'think-ms': { type: 'string', default: '20' },
      'lease-ms': { type: 'string', default: '1500' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const options = {} as Record<(typeof numeric)[number], number>;
  for (const name of numeric) {
    const value = Number(values[name]);
    if (!Number.isSafeInteger(value) || value < 0) {
      console.error(`--${name} must be a whole number ≥ 0, got "${values[name]}".\n\n${usage}`);
      process.exit(2);
    }
    options[name] = value;
  }
  return options;
}

async function main(): Promise<void> {
  const options = readOptions();
  const log = (line: string): void => console.log(line);
  // What is running so far, for a Ctrl-C that comes while the rest starts.
  const running: { stack?: LiveStack; hub?: LiveHub; feed?: InstanceFeed; data?: Redis } = {};
  let stopping: Promise<void> | undefined;
  // Stops what was started, in order, once: a second Ctrl-C waits for the same stop.
  const stop = (signal: string): Promise<void> =>
    (stopping ??= (async () => {
      log(`${signal}: stopping the page, the instances and Redis…`);
      await running.hub?.close();
      running.feed?.close();
      running.data?.disconnect();
      await running.stack?.stop();
      log('stopped; nothing left running.');
      process.exit(0);
    })());
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // npm, or the shell it runs this in, is gone (a SIGTERM to npm ends that shell, not this).
  whenParentDies(() => void stop('parent gone'));

  log('[1/3] starting Redis and 3 sample app instances…');
  const stack = (running.stack = await startLiveStack({
    instances: 3,
    lockTtlMs: options['lease-ms'],
    thinkMs: options['think-ms'],
    log,
  }));
  const [redisPid, ...instancePids] = stack.pids();
  log(
    `Started Redis (pid ${redisPid}, port ${new URL(stack.redisUrl).port}) and ${instancePids.length} sample app instances (pids ${instancePids.join(', ')}).`,
  );
  for (const instance of stack.instances) {
    instance.process.once('exit', (code, signal) => {
      if (!stopping) log(`instance ${instance.name} exited (${signal ?? code})`);
    });
  }
  log('[2/3] connecting to the instances’ event streams…');
  const feed = (running.feed = new InstanceFeed(stack.instances));
  const controls = new LiveControls(stack, feed, {
    stock: options.stock,
    users: options.users,
    concurrency: options.concurrency,
  });
  // The product data, for the product each page follows (it reconnects after a Redis restart).
  const data = (running.data = new Redis(stack.redisUrl, { maxRetriesPerRequest: 1 }));
  const hub = (running.hub = new LiveHub(stack.instances[0].url, feed, controls, data));
  log('[3/3] opening the page…');
  const url = await hub.listen(options.port);
  log(`Live page: ${url}  (Ctrl-C stops everything)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
