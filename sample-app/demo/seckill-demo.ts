import { parseArgs } from 'node:util';
import { startInstances, type AppInstance } from './app-instances.js';
import { runFlashSale, type Endpoint, type SaleResult } from './flash-sale.js';
import { provideRedis, type RedisTarget } from './redis-launcher.js';
import { formatReport, verdict } from './sale-report.js';

const usage = `npm run seckill -- [--instances 3] [--stock 100] [--users 2000] [--concurrency 200] [--json]

Runs a flash sale against several instances of the sample app and checks nothing was oversold.
Uses REDIS_URL if set; otherwise starts a throwaway redis-server on a free loopback port.`;

const endpoints: readonly Endpoint[] = ['buy', 'buy-unsafe', 'buy-atomic'];

interface DemoOptions {
  instances: number;
  stock: number;
  users: number;
  concurrency: number;
  json: boolean;
}

async function main(): Promise<number> {
  const options = readOptions();
  const log = options.json ? (line: string) => process.stderr.write(`${line}\n`) : (line: string) => console.log(line);
  let redis: RedisTarget | undefined;
  let instances: AppInstance[] = [];
  try {
    redis = await provideRedis(log);
    instances = await startInstances(options.instances, { REDIS_URL: redis.url, LOCK_WAIT_MS: '10000' });
    log(`${instances.length} app instances: ${instances.map((i) => i.url).join(', ')}`);
    log(`flash sale: stock ${options.stock}, ${options.users} users, concurrency ${options.concurrency}\n`);
    const results: SaleResult[] = [];
    for (const [index, endpoint] of endpoints.entries()) {
      results.push(await sell(endpoint, 1001 + index, options, instances, redis.url, log));
    }
    const failed = results.filter((r) => r.endpoint !== 'buy-unsafe' && verdict(r, options.stock).length > 0);
    if (options.json) console.log(JSON.stringify({ options, results, ok: failed.length === 0 }, null, 2));
    else log(`\n${formatReport(results, options.stock)}`);
    return failed.length === 0 ? 0 : 1;
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await redis?.stop();
  }
}

function sell(
  endpoint: Endpoint,
  productId: number,
  options: DemoOptions,
  instances: AppInstance[],
  redisUrl: string,
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
    redisUrl,
    onProgress: (answered) => {
      const percent = Math.floor((answered / options.users) * 100);
      if (tty) process.stdout.write(`\r  ${endpoint.padEnd(10)} ${bar(percent)} ${answered}/${options.users}`);
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
      console.error(`--${name} must be a whole number ≥ ${min}, got "${values[name]}".\n\n${usage}`);
      process.exit(2);
    }
    return value;
  };
  return {
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
