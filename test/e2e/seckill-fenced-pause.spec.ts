import type { Redis } from 'ioredis';
import type { AppInstance } from '../../sample-app/demo/app-instances.js';
import { productKeys } from '../../sample-app/src/products/product.keys.js';
import { StaleFenceError } from '../../lib/index.js';
import { reportFigures } from '../harness/figures.js';
import { waitUntil } from '../harness/waits.js';
import { auditSale, lockKeys, productLockKey } from './seckill/sale-audit.js';
import { buy, putStock } from './seckill/seckill-http.js';
import { useSaleFleet } from './seckill/use-sale.js';

const INITIAL_STOCK = 5;
// A's lease is short and its think time long, so the test can stop A inside the critical
// section (before its write) and let the lease run out while it is stopped.
const PAUSED_TTL_MS = 500;
const PAUSED_THINK_MS = 1_500;

interface PauseCase {
  readonly fencing: 'on' | 'off';
  readonly productId: number;
  /** A's settings on top of the short lease and long think time. */
  readonly env: Record<string, string>;
  readonly expected: { status: number; stock: number; orders: number; oversold: number };
  /** The buyer of each order left in Redis. */
  readonly buyers: readonly string[];
}

const CASES: PauseCase[] = [
  {
    fencing: 'on',
    productId: 3001,
    env: {},
    // The fence turns A's stale write away: the stock and the orders still agree.
    expected: { status: 409, stock: INITIAL_STOCK - 1, orders: 1, oversold: 0 },
    buyers: ['fresh-buyer'],
  },
  {
    fencing: 'off',
    productId: 3002,
    env: { SECKILL_FENCING: 'off' },
    // Without it, A writes the stock it read before the pause: two orders, one unit gone. A is
    // told its lock was lost while it sold (503), since its sale may be wrong.
    expected: { status: 503, stock: INITIAL_STOCK - 1, orders: 2, oversold: 1 },
    buyers: ['fresh-buyer', 'paused-buyer'],
  },
];

/**
 * Resolves once `key` exists and its lease has been renewed: its holder is then past taking the
 * lock and inside the critical section (a process stopped while the grant is still on the wire
 * would test the acquire, not the write).
 */
async function waitForRenewal(client: Redis, key: string): Promise<void> {
  let previous = -2;
  await waitUntil(
    `the holder of ${key} to renew it`,
    async () => {
      const pttl = await client.pttl(key);
      // PTTL only goes down between renewals; a renewal puts it back up by about ttl/3.
      const renewed = previous > 0 && pttl > previous + PAUSED_TTL_MS / 10;
      previous = pttl;
      return renewed;
    },
    10_000,
    2,
  );
}

describe('a buyer stopped (SIGSTOP) past its lease while another instance sells', () => {
  const sale = useSaleFleet();
  let normal: AppInstance;
  const paused = new Map<string, AppInstance>();

  beforeAll(async () => {
    const base = { REDIS_URL: sale.server.url };
    const pausedEnv = {
      ...base,
      LOCK_TTL_MS: String(PAUSED_TTL_MS),
      SECKILL_THINK_MS: String(PAUSED_THINK_MS),
    };
    const started = await Promise.all([
      sale.fleet.start(base),
      ...CASES.map(({ env }) => sale.fleet.start({ ...pausedEnv, ...env })),
    ]);
    normal = started[0];
    CASES.forEach(({ fencing }, i) => paused.set(fencing, started[i + 1]));
  });

  it.each(CASES)(
    'with fencing $fencing, the stale write is answered $expected.status',
    async ({ fencing, productId, expected, buyers }) => {
      const a = paused.get(fencing)!;
      await putStock(normal.url, productId, INITIAL_STOCK);
      const lockKey = productLockKey(productId);

      const answerToA = buy(a.url, productId, 'paused-buyer');
      // Awaited below; if the test fails first, A is killed and this rejects unobserved.
      answerToA.catch(() => undefined);
      await waitForRenewal(sale.client, lockKey);
      a.process.kill('SIGSTOP');
      const stoppedAt = performance.now();
      let leaseGoneAfterMs: number;
      try {
        // Stopped, A cannot renew: its key goes once the last renewal's ttl runs out.
        await waitUntil(
          "A's lease to run out while A is stopped",
          async () => (await sale.client.exists(lockKey)) === 0,
          PAUSED_TTL_MS * 4,
          5,
        );
        leaseGoneAfterMs = performance.now() - stoppedAt;
        const answerToB = await buy(normal.url, productId, 'fresh-buyer');
        expect(answerToB.status).toBe(201);
      } finally {
        a.process.kill('SIGCONT');
      }
      const answer = await answerToA;

      expect(answer.status).toBe(expected.status);
      if (fencing === 'on') {
        // A's fence is older than B's, which wrote first: the write is refused, nothing sold.
        const refusal = new StaleFenceError(productKeys(productId).stockFence, 1, 2);
        expect(answer.body).toEqual({
          statusCode: 409,
          error: 'LOCK_FENCE_STALE',
          message: refusal.publicMessage,
          resource: productKeys(productId).stockFence,
        });
      }
      const audit = await auditSale(sale.client, productId);
      expect(audit).toMatchObject({
        stock: expected.stock,
        orders: expected.orders,
        oversold: expected.oversold,
      });
      expect(audit.buyers).toEqual([...buyers].sort());
      expect(await lockKeys(sale.client)).toEqual([]);

      reportFigures(`seckill fenced pause (fencing ${fencing})`, {
        leaseGoneAfterStopMs: Math.round(leaseGoneAfterMs),
        answerToA: answer.status,
        message: answer.body.message,
        audit,
      });
    },
  );
});
