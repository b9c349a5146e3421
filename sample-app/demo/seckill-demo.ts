import { parseArgs } from 'node:util';
import { startInstances, type AppInstance } from './app-instances.js';
import { runFlashSale, type Endpoint, type SaleResult } from './flash-sale.js';
import { provideTopology, type Backend, type Topology } from './redis-topology.js';
import { formatReport, verdict } from './sale-report.js';

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

async function main(): Promise<number> {
  const options = readOptions();
  const log = options.json
    ? (line: string) => process.stderr.write(`${line}\n`)
    : (line: string) => console.log(line);
  let topology: Topology | undefined;
  let instances: AppInstance[] = [];
  try {
    topology = await provideTopology(options.backend, log);
    log(`backend ${options.backend}: ${topology.description}`);
    instances = await startInstances(options.instances, { ...topology.env, LOCK_WAIT_MS: '10000' });
    log(`${instances.length} app instances: ${instances.map((i) => i.url).join(', ')}`);
    log(
      `flash sale: stock ${options.stock}, ${options.users} users, concurrency ${options.concurrency}\n`,
    );
    const results: SaleResult[] = [];
    for (const [index, endpoint] of endpoints.entries()) {
      results.push(await sell(endpoint, 1001 + index, options, instances, topology, log));
    }
    const failed = results.filter(
      (r) => r.endpoint !== 'buy-unsafe' && verdict(r, options.stock).length > 0,
    );
    if (options.json)
      console.log(JSON.stringify({ options, results, ok: failed.length === 0 }, null, 2));
    else log(`\n${formatReport(results, options.stock)}`);
    return failed.length === 0 ? 0 : 1;
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await topology?.stop();
  }
}

function sell(
  endpoint: Endpoint,
  productId: number,
  options: DemoOptions,
  instances: AppInstance[],
  topology: Topology,
  log: (line: string) => void,
): Promise<SaleResult> {
  const tty = process.stdout.isTTY && !options.json;
  let lastPrinted = -1;
  return runFlashSale({
    endpoint,
    productId,
    stock: options.stock,
    users: options.users,
    concurrency: options.concurrency,
    instanceUrls: instances.map((instance) => instance.url),
    connectData: () => topology.connectData(),
    onProgress: (answered) => {
      const percent = Math.floor((answered / options.users) * 100);
      if (tty)
        process.stdout.write(
          `\r  ${endpoint.padEnd(10)} ${bar(percent)} ${answered}/${options.users}`,
        );
      else if (percent >= lastPrinted + 25 && answered > 0) {
        lastPrinted = percent;
        log(`  ${endpoint.padEnd(10)} ${answered}/${options.users} answered`);
      }
    },
  }).finally(() => tty && process.stdout.write('\n'));
}

function bar(percent: number): string {
  const filled = Math.round(percent / 5);
  return `[${'#'.repeat(filled)}${'.'.repeat(20 - filled)}] ${String(percent).padStart(3)}%`;
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
