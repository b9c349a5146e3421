import { parseArgs } from 'node:util';
import { compiledMain, startInstances, type AppInstance } from './app-instances.js';
import { runFlashSale, type Endpoint, type SaleResult } from './flash-sale.js';
import { provideTopology, type Backend, type Topology } from './redis-topology.js';
import { Progress } from '../../tools/progress.js';
import { formatReport, verdict } from './sale-report.js';
import { whenParentDies } from '../../tools/parent-death.js';

const usage = `npm run seckill -- [--instances 3] [--stock 100] [--users 2000] [--concurrency 200]
                        [--backend redis|cluster|redlock] [--json]

Runs a flash sale against several instances of the sample app and checks nothing was oversold.
--backend redis (default) uses REDIS_URL if set, else a throwaway redis-server on a free loopback
port; cluster starts a 3-master Redis Cluster; redlock starts 3 independent masters for the locks
(and one more for the data).`;

const backends: readonly Backend[] = ['redis', 'cluster', 'redlock'];

const endpoints: readonly Endpoint[] = ['buy', 'buy-unsafe', 'buy-atomic'];

interface DemoOptions {
  instances: number;
  stock: number;
  users: number;
  concurrency: number;
  backend: Backend;
  json: boolean;
}

/** What is running, for a signal that may come at any point. */
const running: { topology?: Topology; instances: AppInstance[] } = { instances: [] };
let stopping: Promise<void> | undefined;

/** Stops the instances, then Redis, once. */
function stopAll(): Promise<void> {
  return (stopping ??= (async () => {
    await Promise.all(running.instances.map((instance) => instance.stop()));
    await running.topology?.stop();
  })());
}

/** A signal, or npm gone: stop what was started, then exit (the sale's load with it). */
function stopAndExit(why: string, code: number): void {
  console.error(`${why}: stopping the instances and Redis…`);
  void stopAll().finally(() => process.exit(code));
}

async function main(): Promise<number> {
  const options = readOptions();
  process.on('SIGINT', () => stopAndExit('SIGINT', 130));
  process.on('SIGTERM', () => stopAndExit('SIGTERM', 143));
  // npm, or the shell it runs this in, is gone (a SIGTERM to npm ends that shell, not this).
  whenParentDies(() => stopAndExit('parent gone', 1));
  // With --json, stdout carries only the JSON document: the log and progress go to stderr.
  const progress = new Progress({ stream: options.json ? process.stderr : process.stdout });
  const log = (line: string): void => progress.log(line);
  const steps = 2 + endpoints.length + 1;
  try {
    progress.step(`[1/${steps}] Redis for the ${options.backend} backend…`);
    const topology = (running.topology = await provideTopology(options.backend, log));
    log(`backend ${options.backend}: ${topology.description}`);
    progress.step(`[2/${steps}] starting ${options.instances} app instances…`);
    const env = { ...topology.env, LOCK_WAIT_MS: '10000' };
    // They die with this process, even of kill -9 (where Linux allows).
    const instances = (running.instances = await startInstances(
      options.instances,
      env,
      compiledMain,
      { diesWithParent: true },
    ));
    log(`${instances.length} app instances: ${instances.map((i) => i.url).join(', ')}`);
    log(
      `flash sale: stock ${options.stock}, ${options.users} users, concurrency ${options.concurrency}\n`,
    );
    const results: SaleResult[] = [];
    for (const [index, endpoint] of endpoints.entries()) {
      progress.step(`[${3 + index}/${steps}] sale through ${endpoint}…`);
      results.push(await sell(endpoint, 1001 + index, options, instances, topology, progress));
    }
    progress.step(`[${steps}/${steps}] report`);
    const failed = results.filter(
      (r) => r.endpoint !== 'buy-unsafe' && verdict(r, options.stock).length > 0,
    );
    if (options.json)
      console.log(JSON.stringify({ options, results, ok: failed.length === 0 }, null, 2));
    else log(`\n${formatReport(results, options.stock)}`);
    return failed.length === 0 ? 0 : 1;
  } finally {
    await stopAll();
  }
}

/** One sale, its progress shown as answers received out of users; then a line with its time. */
async function sell(
  endpoint: Endpoint,
  productId: number,
  options: DemoOptions,
  instances: AppInstance[],
  topology: Topology,
  progress: Progress,
): Promise<SaleResult> {
  const label = `  ${endpoint.padEnd(10)} answered`;
  const result = await runFlashSale({
    endpoint,
    productId,
    stock: options.stock,
    users: options.users,
    concurrency: options.concurrency,
    instanceUrls: instances.map((instance) => instance.url),
    connectData: () => topology.connectData(),
    onProgress: (answered) => progress.update(label, answered, options.users),
  }).finally(() => progress.end());
  const seconds = (result.durationMs / 1000).toFixed(1);
  progress.log(
    `  ${endpoint.padEnd(10)} ${result.requests}/${options.users} answered in ${seconds} s`,
  );
  return result;
}

function readOptions(): DemoOptions {
  const { values } = parseArgs({
    options: {
      instances: { type: 'string', default: '3' },
      stock: { type: 'string', default: '100' },
      users: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '200' },
      backend: { type: 'string', default: 'redis' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const whole = (name: 'instances' | 'stock' | 'users' | 'concurrency', min: number): number => {
    const value = Number(values[name]);
    if (!Number.isSafeInteger(value) || value < min) {
      console.error(
        `--${name} must be a whole number ≥ ${min}, got "${values[name]}".\n\n${usage}`,
      );
      process.exit(2);
    }
    return value;
  };
  const backend = values.backend as Backend;
  if (!backends.includes(backend)) {
    console.error(`--backend must be one of ${backends.join(', ')}, got "${backend}".\n\n${usage}`);
    process.exit(2);
  }
  return {
    backend,
    instances: whole('instances', 1),
    stock: whole('stock', 0),
    users: whole('users', 1),
    concurrency: whole('concurrency', 1),
    json: values.json ?? false,
  };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
