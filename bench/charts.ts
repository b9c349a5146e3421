import type { TopLevelSpec } from 'vega-lite';
import { chartSpec, type Bar, type ChartMeta, type Panel } from './chart-panels.js';
import { clientOf, type CellResult, type ScenarioResult } from './results.js';

/** One chart: its file name under bench/charts/, the text for its image link, its spec. */
export interface Chart {
  readonly file: string;
  readonly alt: string;
  readonly spec: TopLevelSpec;
}

type Scenarios = readonly ScenarioResult[];

/** Every chart the scenarios that ran have data for; a scenario that failed has none. */
export function buildCharts(meta: ChartMeta, scenarios: Scenarios): Chart[] {
  const charts = [
    uncontended(meta, scenarios),
    hotKeyShare(meta, scenarios),
    hotKeyWait(meta, scenarios),
    flashSale(meta, scenarios),
    lockFamily(meta, scenarios),
    scale(meta, scenarios),
    handOff(meta, scenarios),
  ];
  return charts.filter((chart): chart is Chart => chart !== undefined);
}

function cellsOf(scenarios: Scenarios, id: number): readonly CellResult[] {
  return scenarios.find((scenario) => scenario.id === id)?.cells ?? [];
}

/** The client libraries a scenario's cells ran on, in the order they ran. */
function clientsOf(cells: readonly CellResult[]): string[] {
  return [...new Set(cells.map(clientOf))];
}

/** Bars of `figure`, one per contender per cell that `group` names (undefined: left out). */
function bars(
  cells: readonly CellResult[],
  figure: string,
  group: (cell: CellResult) => string | undefined,
): Bar[] {
  return cells.flatMap((cell) => {
    const name = group(cell);
    if (name === undefined) return [];
    return cell.results
      .filter((result) => Number.isFinite(result.figures[figure]))
      .map((result) => ({ group: name, series: result.contender, value: result.figures[figure] }));
  });
}

/** Bars of several figures of each cell's first contender: the figure along x, the cell as series. */
function figureBars(cells: readonly CellResult[], figures: Record<string, string>): Bar[] {
  return cells.flatMap((cell) =>
    Object.entries(figures).flatMap(([figure, label]) => {
      const value = cell.results[0]?.figures[figure];
      return Number.isFinite(value) ? [{ group: label, series: cell.cell, value }] : [];
    }),
  );
}

function chart(file: string, title: string, meta: ChartMeta, panels: Panel[]): Chart | undefined {
  const shown = panels.filter((panel) => panel.bars.length > 0);
  if (!shown.length) return undefined;
  return { file, alt: title, spec: chartSpec(title, meta, shown) };
}

function uncontended(meta: ChartMeta, scenarios: Scenarios): Chart | undefined {
  const cells = cellsOf(scenarios, 1);
  return chart(
    'uncontended.svg',
    'Uncontended acquire + release: throughput × raw (higher is better)',
    meta,
    clientsOf(cells).map((client) => ({
      title: [`Scenario 1 on ${client}: cycles/s over`, `raw ${client}’s, runs of one repetition`],
      bars: bars(cells, 'ratioToRaw', (cell) =>
        clientOf(cell) === client ? `C=${cell.params.workers}` : undefined,
      ),
      xTitle: 'concurrent callers',
      yTitle: `throughput (× raw SET NX + script on ${client})`,
      rule: 1,
      labels: '.2f',
    })),
  );
}

function hotKeyShare(meta: ChartMeta, scenarios: Scenarios): Chart | undefined {
  const cells = cellsOf(scenarios, 2);
  const processes = bars(cellsOf(scenarios, 3), 'pctOfMax', (cell) =>
    cell.cell.replace(/ cs=.*/, ' procs'),
  );
  const clients = clientsOf(cells);
  const panels: Panel[] = clients.map((client) => ({
    title: [
      `Scenario 2${client === 'ioredis' ? ' and 3' : ''} on ${client}: locks/s over`,
      '1/(cs + RTT), critical section 1 ms',
    ],
    bars: [
      ...bars(cells, 'pctOfMax', (cell) =>
        cell.params.csMs === 1 && clientOf(cell) === client
          ? `W=${cell.params.workers}`
          : undefined,
      ),
      // Scenario 3 runs on ioredis.
      ...(client === 'ioredis' ? processes : []),
    ],
    xTitle: 'workers on one key (one process; processes × workers)',
    yTitle: 'throughput (% of theoretical maximum)',
    rule: 100,
    labels: '.0f',
  }));
  if (!clients.includes('ioredis') && processes.length > 0) {
    panels.push({ ...panels[0], title: 'Scenario 3 on ioredis', bars: processes });
  }
  return chart(
    'hot-key-share.svg',
    'Hot key: share of the theoretical maximum (higher is better)',
    meta,
    panels,
  );
}

function hotKeyWait(meta: ChartMeta, scenarios: Scenarios): Chart | undefined {
  const cells = cellsOf(scenarios, 2);
  const panel = (client: string, csMs: number): Panel => ({
    title: `Scenario 2 on ${client}: critical section ${csMs} ms`,
    bars: bars(cells, 'waitP99', (cell) =>
      cell.params.csMs === csMs && clientOf(cell) === client
        ? `W=${cell.params.workers}`
        : undefined,
    ),
    xTitle: 'workers on one key',
    yTitle: 'wait p99 (ms, log scale)',
    log: true,
  });
  // A row per critical section, a column per client.
  const clients = clientsOf(cells);
  return chart(
    'hot-key-wait.svg',
    'Hot key: wait p99, from asking to holding (lower is better)',
    meta,
    [0, 1].flatMap((csMs) => clients.map((client) => panel(client, csMs))),
  );
}

function flashSale(meta: ChartMeta, scenarios: Scenarios): Chart | undefined {
  const cells = cellsOf(scenarios, 4);
  return chart(
    'flash-sale.svg',
    'Flash sale: every buyer at once on one product (scenario 4)',
    meta,
    [
      {
        title: 'Buys per second (higher is better)',
        bars: bars(cells, 'buysPerSec', clientOf),
        xTitle: 'client library of the locks',
        yTitle: 'completed buys per second (log scale)',
        // The atomic Lua ceiling is some ten times the locks: on a linear scale they are slivers.
        log: true,
        labels: ',.0f',
      },
      {
        title: ['Oversold: orders beyond the stock', '(0 is correct)'],
        bars: bars(cells, 'oversold', clientOf),
        xTitle: 'client library of the locks',
        yTitle: 'orders beyond stock',
        labels: ',.0f',
      },
    ],
  );
}

function lockFamily(meta: ChartMeta, scenarios: Scenarios): Chart | undefined {
  const semaphore = (cell: CellResult): string | undefined =>
    cell.params.limit ? `limit ${cell.params.limit}, W=${cell.params.workers}` : undefined;
  return chart(
    'semaphore.svg',
    'Semaphore: many workers, one key, 1 ms critical section (scenario 6)',
    meta,
    [
      {
        title: ['Share of the maximum limit/(cs + RTT)', '(higher is better)'],
        bars: bars(cellsOf(scenarios, 6), 'pctOfMax', semaphore),
        xTitle: 'cell',
        yTitle: 'throughput (% of theoretical maximum)',
        rule: 100,
        labels: '.1f',
      },
      {
        title: 'Wait p99 (lower is better)',
        bars: bars(cellsOf(scenarios, 6), 'waitP99', semaphore),
        xTitle: 'cell',
        yTitle: 'wait p99 (ms)',
        labels: ',.1f',
      },
    ],
  );
}

function scale(meta: ChartMeta, scenarios: Scenarios): Chart | undefined {
  const held = cellsOf(scenarios, 7);
  // Scenario 7's bulk cell has ratios to raw; its held cells have the lag and neighbour figures.
  const bulk = held.filter((cell) => cell.results.some((r) => r.figures.acquireToRaw));
  const holding = held.filter((cell) => cell.results[0]?.figures.lagP99 !== undefined);
  return chart('scale.svg', 'Scale on a shared Redis (scenarios 7 and 8)', meta, [
    {
      title: ['Scenario 7: bulk take and give of every lock', '(× raw, higher is better)'],
      bars: [
        ...bars(bulk, 'acquireToRaw', () => 'acquire'),
        ...bars(bulk, 'releaseToRaw', () => 'release'),
      ],
      xTitle: 'operation',
      yTitle: 'rate (× raw)',
      rule: 1,
      labels: '.2f',
    },
    {
      title: ['Scenario 7: while the locks are held', '(ms, lower is better)'],
      bars: figureBars(holding, {
        lagP99: 'event-loop lag p99',
        waitP99: 'neighbour wait p99',
        idleWaitP99: 'neighbour alone',
      }),
      xTitle: 'measure',
      yTitle: 'milliseconds',
      legend: 'cell',
      labels: '.1f',
    },
    {
      title: ['Scenario 8: hand-over to a waiter in another', 'process (lower is better)'],
      bars: figureBars(cellsOf(scenarios, 8), { handOverP50: 'p50', handOverP99: 'p99' }),
      xTitle: 'percentile',
      yTitle: 'release to grant (ms, log scale)',
      legend: 'cell',
      log: true,
      labels: '.2f',
    },
  ]);
}

function handOff(meta: ChartMeta, scenarios: Scenarios): Chart | undefined {
  const cells = cellsOf(scenarios, 10);
  return chart(
    'hand-off.svg',
    'Hand-off to a waiter in another process: this code against 407040a (scenario 10)',
    meta,
    [
      {
        title: ['From the holder’s release() to the', 'waiter holding the lock (lower is better)'],
        bars: [
          ...bars(cells, 'handOffP50', () => 'p50'),
          ...bars(cells, 'handOffP99', () => 'p99'),
        ],
        xTitle: 'percentile',
        yTitle: 'release to grant (ms)',
        legend: 'build',
        labels: '.2f',
      },
    ],
  );
}
