import { renderSvg } from '../../bench/chart-render.js';
import { buildCharts } from '../../bench/charts.js';
import type { ScenarioResult } from '../../bench/results.js';

const meta = {
  nproc: 2,
  cpu: 'Test CPU',
  node: 'v20.0.0',
  redis: '7.0.0',
  gitCommit: 'abc1234',
  startedAt: '2026-01-02T03:04:05.000Z',
  command: 'npm run bench',
};

const CONTENDERS = ['library', 'redlock', 'redis-semaphore', 'raw'];

/** Scenario 1 with one cell, each contender at a known ratio to raw. */
const uncontended: ScenarioResult = {
  id: 1,
  title: 'Uncontended',
  notes: [],
  cells: [
    {
      cell: 'C=8',
      params: { workers: 8 },
      results: CONTENDERS.map((contender, i) => {
        const figures = { cyclesPerSec: 1000 * (i + 1), ratioToRaw: 0.5 + i / 10 };
        return { contender, settings: '', figures, reps: [figures] };
      }),
    },
  ],
};

describe('the bench charts', () => {
  it('draw only the scenarios that ran', () => {
    expect(buildCharts(meta, [uncontended]).map((chart) => chart.file)).toEqual([
      'uncontended.svg',
    ]);
    expect(buildCharts(meta, [])).toEqual([]);
  });

  it('render an SVG in Node with the title, the machine line and one bar per contender', async () => {
    const [chart] = buildCharts(meta, [uncontended]);
    const svg = await renderSvg(chart.spec);

    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('Uncontended acquire + release: throughput × raw (higher is better)');
    expect(svg).toContain('2 CPUs (Test CPU), Node v20.0.0, Redis 7.0.0');
    expect(svg).toContain('commit abc1234, 2026-01-02 03:04 UTC');
    expect(svg.match(/aria-roledescription="bar"/g)).toHaveLength(CONTENDERS.length);
    for (const contender of CONTENDERS) expect(svg).toContain(`>${contender}</text>`);
    // The bar labels: each contender's ratio, as printed on the chart.
    for (const label of ['0.50', '0.60', '0.70', '0.80']) expect(svg).toContain(`>${label}</text>`);
  });

  it('draw a panel per client library, each contender in the same colour in every panel', () => {
    const onClient = (client: string, contenders: string[]) => ({
      ...uncontended.cells[0],
      client,
      results: uncontended.cells[0].results.filter((r) => contenders.includes(r.contender)),
    });
    const clients: ScenarioResult = {
      ...uncontended,
      cells: [onClient('ioredis', CONTENDERS), onClient('glide', ['library', 'raw'])],
    };
    const [chart] = buildCharts(meta, [clients]);
    const panels = (chart.spec as unknown as { concat: Panel[] }).concat;
    expect(panels.map((panel) => panel.title.text[0])).toEqual([
      'Scenario 1 on ioredis: cycles/s over',
      'Scenario 1 on glide: cycles/s over',
    ]);
    const scales = panels.map((panel) => panel.layer[0].encoding.color.scale);
    expect(scales[1]).toEqual(scales[0]);
    expect(scales[0].domain).toEqual(CONTENDERS);
  });

  it("draw scenario 10's hand-off, this code beside 407040a", () => {
    const figures = { handOffP50: 0.6, handOffP99: 1.5 };
    const handOff: ScenarioResult = {
      id: 10,
      title: 'Hand-off',
      notes: [],
      cells: [
        {
          cell: '120 hand-offs',
          params: { handOffs: 120 },
          results: ['current', '407040a'].map((contender) => ({
            contender,
            settings: '',
            figures,
            reps: [figures],
          })),
        },
      ],
    };
    expect(buildCharts(meta, [handOff]).map((chart) => chart.file)).toEqual(['hand-off.svg']);
  });
});

/** The part of a panel's Vega-Lite spec these tests read. */
interface Panel {
  title: { text: string[] };
  layer: { encoding: { color: { scale: { domain: string[]; range: string[] } } } }[];
}
