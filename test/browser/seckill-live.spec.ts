import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { chromium, type Browser, type Page } from 'playwright-core';
import { productKeys } from '../../sample-app/src/products/product.keys.js';
import { LIVE_PRODUCT_ID } from '../../sample-app/src/live/live-snapshot.js';
import { reportFigures } from '../harness/figures.js';
import { waitUntil } from '../harness/waits.js';

/** Debian's chromium binary itself: /usr/bin/chromium is a wrapper script that hangs headless. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/lib/chromium/chromium';
const LAUNCHER = fileURLToPath(
  new URL('../../sample-app/dist/sample-app/demo/live/seckill-live.js', import.meta.url),
);
/** The screenshots CI keeps: `test-output/seckill-live/` at the repository root. */
const OUTPUT = fileURLToPath(new URL('../../test-output/seckill-live/', import.meta.url));
const STOCK = 30;
// A small sale, no think time: each sale takes a second or two.
const SALE = ['--stock', String(STOCK), '--users', '300', '--concurrency', '30', '--think-ms', '0'];

interface Launched {
  readonly child: ChildProcess;
  readonly url: string;
  readonly redisPort: number;
  readonly pids: number[];
}

/** Runs `npm run seckill:live`'s program as a child and reads its URL and PIDs. */
function launch(): Promise<Launched> {
  const child = spawn(process.execPath, [LAUNCHER, ...SALE], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within 30 s:\n${output}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const url = /Live page: (\S+)/.exec(output)?.[1];
      const started = /Redis \(pid (\d+), port (\d+)\) .* \(pids ([\d, ]+)\)/.exec(output);
      if (!url || !started) return;
      clearTimeout(timer);
      const pids = [started[1], ...started[3].split(', ')].map(Number);
      resolve({ child, url, redisPort: Number(started[2]), pids });
    });
    child.once('exit', (code) => reject(new Error(`the launcher exited (${code}):\n${output}`)));
  });
}

/** The colours of live.css for a good and a bad outcome, as the browser computes them. */
const GREEN = 'rgb(19, 115, 51)';
const RED = 'rgb(197, 34, 31)';

/** The newest log line whose text matches: its tone (class) and the colour it is shown in. */
async function logLine(page: Page, match: RegExp): Promise<{ tone: string; color: string }> {
  const line = page.locator('#log li').filter({ hasText: match }).first();
  await line.waitFor({ timeout: 5_000 });
  // Runs in the page (the repo's TypeScript has no DOM types): the colour the browser shows.
  const style = (item: unknown): string =>
    (
      globalThis as unknown as { getComputedStyle(item: unknown): { color: string } }
    ).getComputedStyle(item).color;
  return { tone: (await line.getAttribute('class')) ?? '', color: await line.evaluate(style) };
}

/** Snapshots the page has received (live.js counts them). */
const liveUpdates = (page: Page): Promise<number> => page.evaluate<number>('window.liveUpdates');

const text = async (page: Page, id: string): Promise<number> =>
  Number(await page.locator(`#${id}`).textContent());

describe('npm run seckill:live in a real browser', () => {
  let browser: Browser;
  let stack: Launched;
  let redis: Redis;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
    }
    [browser, stack] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] }),
      launch(),
    ]);
    redis = new Redis(stack.redisPort, '127.0.0.1');
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    mkdirSync(OUTPUT, { recursive: true });
  }, 40_000);

  afterAll(async () => {
    await browser?.close();
    redis?.disconnect();
    // Only if a test failed before the Ctrl-C below: nothing started here is left running.
    for (const pid of [stack?.child.pid, ...(stack?.pids ?? [])]) {
      if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  /** Clicks a sale button and resolves once the page says that sale finished. */
  async function sell(label: string, saleNumber: number): Promise<void> {
    await page.getByRole('button', { name: label }).click();
    const state = page.locator('#sale-state');
    await waitUntil(
      `the page to say sale ${saleNumber} finished`,
      async () =>
        /^Sale (\d+) .*finished/.exec((await state.textContent()) ?? '')?.[1] ===
        String(saleNumber),
      30_000,
      50,
    );
  }

  /** Waits until the page's figures are Redis's own, read straight from the product's keys. */
  async function pageMatchesRedis(
    productId = LIVE_PRODUCT_ID,
  ): Promise<{ stock: number; orders: number; initial: number }> {
    const keys = productKeys(productId);
    const [stock, initial, orders] = await Promise.all([
      redis.get(keys.stock).then(Number),
      redis.get(keys.initial).then(Number),
      redis.hlen(keys.orders),
    ]);
    await waitUntil(
      'the page to show what Redis holds',
      async () =>
        (await text(page, 'stock')) === stock &&
        (await text(page, 'sold')) === orders &&
        (await text(page, 'oversold')) === Math.max(0, orders - initial),
      3_000,
    );
    return { stock, orders, initial };
  }

  it('shows the sale with the lock selling exactly the stock, then the unlocked one overselling', async () => {
    const started = performance.now();
    await page.goto(stack.url);
    await page.waitForFunction('window.liveUpdates > 0');
    const updatesBefore = await liveUpdates(page);
    const rateFrom = performance.now();

    await sell('Sale with the lock', 1);
    const locked = await pageMatchesRedis();
    expect(locked).toEqual({ stock: 0, orders: STOCK, initial: STOCK });
    expect(await text(page, 'sold')).toBe(STOCK);
    expect(await text(page, 'oversold')).toBe(0);
    // The log says how the sale went, green for a correct one.
    expect(await logLine(page, /buy: OK, sold exactly/)).toEqual({
      tone: 'good',
      color: GREEN,
    });
    const updates = (await liveUpdates(page)) - updatesBefore;
    const perSecond = updates / ((performance.now() - rateFrom) / 1000);
    await page.screenshot({ path: `${OUTPUT}locked-sale.png` });

    await sell('Sale without a lock', 2);
    const unlocked = await pageMatchesRedis();
    expect(await text(page, 'oversold')).toBeGreaterThan(0);
    expect(unlocked.orders).toBeGreaterThan(STOCK);
    // Oversold is the wrong outcome, however expected without a lock: red, never green.
    expect(await logLine(page, /NOT SAFE/)).toEqual({ tone: 'bad', color: RED });
    await page.screenshot({ path: `${OUTPUT}unlocked-sale.png` });

    reportFigures('seckill live page', {
      updatesPerSecond: Number(perSecond.toFixed(1)),
      unlockedOversold: unlocked.orders - unlocked.initial,
      pageMs: Math.round(performance.now() - started),
    });
  }, 60_000);

  it('follows any product of the catalogue, chosen on the page, and sells the one it follows', async () => {
    const productOne = await pageMatchesRedis();
    // A product created through the app (the page's origin hands /products to an instance).
    const put = await fetch(`${stack.url}products/7`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ stock: 5 }),
    });
    expect(put.status).toBe(200);
    await waitUntil(
      'the page to list product 7 in its catalogue',
      async () => (await page.locator('#product option[value="7"]').count()) === 1,
      10_000,
      50,
    );
    await page.selectOption('#product', '7');
    expect(await pageMatchesRedis(7)).toEqual({ stock: 5, orders: 0, initial: 5 });

    await sell('Sale with the lock', 3);
    expect(await page.locator('#sale-state').textContent()).toMatch(/product 7/);
    expect(await pageMatchesRedis(7)).toEqual({ stock: 0, orders: STOCK, initial: STOCK });
    await page.screenshot({ path: `${OUTPUT}product-7.png` });

    // Product 1 was left as it was, and the page shows it again once chosen.
    await page.selectOption('#product', String(LIVE_PRODUCT_ID));
    expect(await pageMatchesRedis()).toEqual(productOne);
  }, 60_000);

  it('stops Redis and every instance on Ctrl-C (SIGINT), checked by PID', async () => {
    const exited = new Promise((resolve) => stack.child.once('exit', resolve));
    stack.child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect([stack.child.pid!, ...stack.pids].filter(alive)).toEqual([]);
  }, 20_000);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
