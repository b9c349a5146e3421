import type { SaleResult } from './flash-sale.js';

/** A sale is correct when it sold exactly the stock, once per user, and recorded every sale. */
export function verdict(result: SaleResult, stock: number): string[] {
  const problems: string[] = [];
  if (result.sold !== stock) problems.push(`sold ${result.sold} of ${stock}`);
  if (result.oversold > 0) problems.push(`oversold ${result.oversold}`);
  if (result.duplicates > 0) problems.push(`${result.duplicates} duplicate orders`);
  if (result.orders !== result.sold)
    problems.push(`${result.orders} orders for ${result.sold} sold`);
  return problems;
}

const columns: [string, (r: SaleResult) => string][] = [
  ['endpoint', (r) => r.endpoint],
  ['requests', (r) => String(r.requests)],
  ['201', (r) => String(r.created)],
  ['sold', (r) => String(r.sold)],
  ['left', (r) => String(r.remaining)],
  ['orders', (r) => String(r.orders)],
  ['oversold', (r) => String(r.oversold)],
  ['dup', (r) => String(r.duplicates)],
  ['busy', (r) => String(r.busy)],
  ['req/s', (r) => r.throughput.toFixed(0)],
  ['p50 ms', (r) => r.p50.toFixed(1)],
  ['p99 ms', (r) => r.p99.toFixed(1)],
];

/** The report table, one row per endpoint, then a plain-words verdict per endpoint. */
export function formatReport(results: readonly SaleResult[], stock: number): string {
  const rows = [
    columns.map(([title]) => title),
    ...results.map((r) => columns.map(([, cell]) => cell(r))),
  ];
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const line = (row: string[]): string =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  const table = [
    line(rows[0]),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.slice(1).map(line),
  ];
  return [...table, '', ...results.map((r) => describeSale(r, stock))].join('\n');
}

/** One sale's verdict in words, with its answers other than 201. */
export function describeSale(result: SaleResult, stock: number): string {
  const problems = verdict(result, stock);
  const others = Object.entries(result.answers)
    .filter(([code]) => code !== '201')
    .map(([code, n]) => `${n}× ${code}`)
    .join(', ');
  const answers = others ? ` Other answers: ${others}.` : '';
  if (result.endpoint === 'buy-unsafe') {
    return problems.length > 0
      ? `buy-unsafe: NOT SAFE, as expected without a lock: ${problems.join(', ')}.${answers}`
      : `buy-unsafe: happened not to oversell this run (the race is real but was not hit).${answers}`;
  }
  return problems.length === 0
    ? `${result.endpoint}: OK, sold exactly ${stock}, oversold 0, duplicates 0.${answers}`
    : `${result.endpoint}: FAILED: ${problems.join(', ')}.${answers}`;
}
