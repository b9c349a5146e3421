import type { CellResult, ScenarioResult } from './results.js';

interface Column {
  readonly header: string;
  readonly figure: string;
  readonly digits?: number;
}

const num = (header: string, figure: string, digits = 0): Column => ({ header, figure, digits });

/** Columns shown per scenario; every figure is also in the JSON. */
const COLUMNS: Record<number, Column[]> = {
  1: [
    num('cycles/s', 'cyclesPerSec'),
    num('p50 ms', 'p50', 3),
    num('p99 ms', 'p99', 3),
    num('× raw', 'ratioToRaw', 2),
    num('min', 'ratioToRawMin', 2),
    num('max', 'ratioToRawMax', 2),
    num('cmds/cycle', 'cmdsPerCycle', 1),
    num('top-level/cycle', 'topLevelPerCycle', 1),
    num('CPU µs/cycle', 'cpuUsPerCycle', 1),
    num('Redis µs/cycle', 'redisCpuUsPerCycle', 1),
  ],
  2: hotKeyColumns(),
  3: [
    ...hotKeyColumns(),
    num('proc min %', 'processShareMinPct'),
    num('proc max %', 'processShareMaxPct'),
  ],
  4: [
    num('buys/s', 'buysPerSec'),
    num('× redlock', 'ratioToRedlock', 2),
    num('min', 'ratioToRedlockMin', 2),
    num('max', 'ratioToRedlockMax', 2),
    num('sold', 'sold'),
    num('sold out', 'soldOut'),
    num('not acq.', 'notAcquired'),
    num('oversold', 'oversold'),
    num('p50 ms', 'p50', 1),
    num('p99 ms', 'p99', 1),
    num('overlaps', 'overlaps'),
    num('cmds/buy', 'cmdsPerBuy', 1),
    num('top-level/buy', 'topLevelPerBuy', 1),
    num('CPU µs/buy', 'cpuUsPerBuy', 1),
    num('Redis µs/buy', 'redisCpuUsPerBuy', 1),
  ],
  5: [
    num('top-level/s', 'topLevelPerSec', 1),
    num('cmds/s', 'cmdsPerSec'),
    num('leases renewed/s', 'leasesRenewedPerSec'),
    num('calls/tick', 'callsPerTick', 2),
    num('heap held MB', 'heapHeldMB', 1),
    num('heap growth MB', 'heapGrowthMB', 1),
    num('after release MB', 'heapAfterReleaseMB', 1),
    num('keys at end', 'keysAtEnd'),
    num('lost', 'lost'),
    num('release errors', 'releaseErrors'),
    num('acquire ms', 'acquireMs'),
  ],
  6: [
    num('locks/s', 'locksPerSec'),
    num('% max', 'pctOfMax', 1),
    num('max/s', 'theoreticalMax'),
    num('× peer', 'ratioToPeer', 2),
    num('cs ms', 'csMs', 2),
    num('wait p99 ms', 'waitP99', 1),
    num('least %', 'leastServedPct'),
    num('most at once', 'mostAtOnce'),
    num('cmds/lock', 'cmdsPerLock', 2),
    num('reads/s', 'readsPerSec'),
    num('writes/s', 'writesPerSec'),
    num('read p99 ms', 'readWaitP99', 1),
    num('write p99 ms', 'writeWaitP99', 1),
    num('readers at once', 'mostReadersAtOnce'),
    num('writer overlaps', 'writerOverlaps'),
  ],
  7: [
    num('acquire/s', 'acquirePerSec'),
    num('× raw', 'acquireToRaw', 2),
    num('release/s', 'releasePerSec'),
    num('× raw', 'releaseToRaw', 2),
    num('cmds ≥ 2 ms', 'commandsOver2ms'),
    num('slowest µs', 'slowestCommandUs'),
    num('stalls', 'stalls'),
    num('host steal ms', 'stealMs'),
    num('lag p99 ms', 'lagP99', 1),
    num('lag max ms', 'lagMax', 1),
    num('heap B/lock', 'heapPerLockB'),
    num('growth B/lock', 'heapGrowthPerLockB'),
    num('Redis B/lock', 'redisPerLockB'),
    num('calls/round', 'callsPerRound', 1),
    num('CPU µs/renewal', 'cpuPerRenewalUs', 1),
    num('process CPU %', 'cpuPct'),
    num('Redis CPU %', 'redisCpuPct'),
    num('neighbour wait p50 ms', 'waitP50', 2),
    num('p99 ms', 'waitP99', 2),
    num('alone p99 ms', 'idleWaitP99', 2),
    num('round trip p99 ms', 'tripP99', 2),
    num('alone p99 ms', 'idleTripP99', 2),
    num('lost', 'lost'),
  ],
  8: [
    num('hand-over p50 ms', 'handOverP50', 2),
    num('p99 ms', 'handOverP99', 2),
    num('max ms', 'handOverMax', 1),
    num('first release to last grant ms', 'burstMs'),
    num('waiter busy %', 'waiterBusyPct'),
    num('waiter CPU µs/key', 'waiterCpuUs'),
    num('cmds/hand-over', 'cmdsPerHandOver', 1),
    num('subscriber conns', 'subscriberConnections'),
    num('channels', 'channels'),
  ],
  10: [
    num('hand-offs', 'handOffs'),
    num('p50 ms', 'handOffP50', 3),
    num('p99 ms', 'handOffP99', 3),
    num('× old p50', 'ratioToOldP50', 2),
    num('min', 'ratioToOldP50Min', 2),
    num('max', 'ratioToOldP50Max', 2),
    num('release ms', 'releaseP50', 3),
    num('cmds/hand-off', 'cmdsPerHandOff', 1),
    num('holder CPU µs', 'holderCpuUs', 0),
    num('waiter CPU µs', 'waiterCpuUs', 0),
    num('Redis µs', 'redisCpuUs', 0),
  ],
  9: [
    num('semaphore/s', 'semaphorePerSec'),
    num('slowest µs', 'semaphoreSlowestUs'),
    num('≥ 2 ms', 'semaphoreOver2ms'),
    num('host steal ms', 'semaphoreStealMs'),
    num('Redis B/holder', 'redisPerHolderB'),
    num('reads/s', 'readsPerSec'),
    num('slowest µs', 'readersSlowestUs'),
    num('≥ 2 ms', 'readersOver2ms'),
    num('host steal ms', 'readersStealMs'),
    num('Redis B/reader', 'redisPerReaderB'),
  ],
};

function hotKeyColumns(): Column[] {
  return [
    num('locks/s', 'locksPerSec'),
    num('% max', 'pctOfMax', 1),
    num('max/s', 'theoreticalMax'),
    num('cs ms', 'csMs', 2),
    num('RTT ms', 'rttMs', 3),
    num('idle RTT', 'rttAfterIdleMs', 3),
    num('hand-off p50', 'handoffP50', 3),
    num('p99', 'handoffP99', 2),
    num('self %', 'selfHandoffPct', 1),
    num('wait p99 ms', 'waitP99', 1),
    num('least', 'leastServed'),
    num('least %', 'leastServedPct'),
    num('most %', 'mostServedPct'),
    num('0-lock', 'zeroLockWorkers'),
    num('cmds/lock', 'cmdsPerLock', 2),
    num('top-level', 'topLevelPerLock', 2),
    num('CPU µs/lock', 'cpuUsPerLock', 1),
    num('Redis µs/lock', 'redisCpuUsPerLock', 1),
    num('overlaps', 'overlaps'),
  ];
}

export function formatNumber(value: number | undefined, digits = 0): string {
  if (value === undefined || Number.isNaN(value)) return '–';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '−∞';
  return value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/** The scenario's rows: one per contender per cell, first two columns cell and contender. */
export function tableRows(scenario: ScenarioResult): string[][] {
  const columns = COLUMNS[scenario.id];
  const header = ['cell', 'contender', ...columns.map((column) => column.header)];
  const rows = scenario.cells.flatMap((cell: CellResult) =>
    cell.results.map((result) => [
      cell.cell,
      result.contender,
      ...columns.map((column) => formatNumber(result.figures[column.figure], column.digits)),
    ]),
  );
  return [header, ...rows];
}

/** Plain-text table with right-aligned figures. */
export function renderText(rows: readonly string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows
    .map((row) =>
      row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '),
    )
    .join('\n');
}

export function renderMarkdown(rows: readonly string[][]): string {
  const line = (row: readonly string[]): string => `| ${row.join(' | ')} |`;
  const rule = rows[0].map((_, i) => (i < 2 ? '---' : '---:'));
  return [line(rows[0]), line(rule), ...rows.slice(1).map(line)].join('\n');
}
