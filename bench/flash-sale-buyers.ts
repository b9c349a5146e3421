import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Contender } from './contenders/index.js';
import type { Section } from './sections.js';

export type BuyOutcome = 'sold' | 'sold-out' | 'not-acquired';

/** One sale: its stock key, the lock guarding it, the connection the shop's own reads use. */
export interface Sale {
  readonly stockKey: string;
  readonly lockKey: string;
  readonly data: Redis;
  /** Critical sections, for the overlap detector. */
  readonly sections: Section[];
}

/** A way to process one buy. */
export interface Buyer {
  readonly name: string;
  readonly settings: string;
  buy(sale: Sale, worker: number): Promise<BuyOutcome>;
}

export const SALE_WAIT_MS = 2_000;
const SALE_TTL_MS = 10_000;

/**
 * Read the stock, then write it back one lower: the read-modify-write a lock exists to
 * protect. Without the lock, concurrent buyers read the same stock and oversell.
 */
async function takeOne(sale: Sale, worker: number): Promise<BuyOutcome> {
  const enter = process.hrtime.bigint();
  const stock = Number(await sale.data.get(sale.stockKey));
  const outcome = stock > 0 ? 'sold' : 'sold-out';
  if (stock > 0) await sale.data.set(sale.stockKey, stock - 1);
  sale.sections.push({ enter, exit: process.hrtime.bigint(), worker });
  return outcome;
}

export function lockedBuyer(contender: Contender): Buyer {
  return {
    name: contender.name,
    settings: contender.settings,
    async buy(sale, worker) {
      const held = await contender.acquire(sale.lockKey, {
        ttl: SALE_TTL_MS,
        wait: SALE_WAIT_MS,
      });
      if (!held) return 'not-acquired';
      try {
        return await takeOne(sale, worker);
      } finally {
        await held.release();
      }
    },
  };
}

/** The control: no lock at all. It must oversell, or the sale would prove nothing. */
export const noLockBuyer: Buyer = {
  name: 'no lock (control)',
  settings: 'GET then SET without any lock',
  buy: takeOne,
};

const DECREMENT =
  "local stock = tonumber(redis.call('GET', KEYS[1]) or '0') " +
  "if stock > 0 then redis.call('DECR', KEYS[1]) return 1 end return 0";
const DECREMENT_SHA = createHash('sha1').update(DECREMENT).digest('hex');

/** The ceiling: check-and-decrement in one Lua call. No lock can beat one round trip. */
export async function atomicLuaBuyer(data: Redis): Promise<Buyer> {
  await data.script('LOAD', DECREMENT);
  return {
    name: 'atomic Lua (ceiling)',
    settings: 'one EVALSHA: decrement if positive',
    async buy(sale) {
      const sold = await data.evalsha(DECREMENT_SHA, 1, sale.stockKey);
      return sold === 1 ? 'sold' : 'sold-out';
    },
  };
}
