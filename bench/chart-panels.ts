import type { TopLevelSpec } from 'vega-lite';
import type { RunMeta } from './run-meta.js';

/** One bar: `group` along the x axis, `series` side by side within it and by colour. */
export interface Bar {
  readonly group: string;
  readonly series: string;
  readonly value: number;
}

export interface Panel {
  /** Lines of the panel's title: text widths are estimated without a canvas, so keep them short. */
  readonly title: string | readonly string[];
  readonly bars: readonly Bar[];
  readonly xTitle: string;
  readonly yTitle: string;
  /** Log scale, where the contenders differ by orders of magnitude. */
  readonly log?: boolean;
  /** A reference line (1× raw, 100% of the maximum). */
  readonly rule?: number;
  /** Print each bar's value: a bar of 0 (oversold) is otherwise invisible. */
  readonly labels?: string;
  readonly legend?: string;
}

export type ChartMeta = Pick<
  RunMeta,
  'nproc' | 'cpu' | 'node' | 'redis' | 'gitCommit' | 'startedAt' | 'command'
>;

/**
 * Fixed colours per contender, so the library is the same colour in every chart; other series
 * (cells of the scale scenarios) take the rest in order.
 */
const COLOURS: Record<string, string> = {
  library: '#1f77b4',
  redlock: '#d62728',
  'redis-semaphore': '#ff7f0e',
  raw: '#7f7f7f',
  '@sesamecare-oss/redlock': '#e377c2',
  'redlock-universal': '#17becf',
  current: '#1f77b4',
  '407040a': '#bcbd22',
  'atomic Lua (ceiling)': '#2ca02c',
  'no lock (control)': '#9467bd',
};
const OTHERS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2'];

/**
 * The machine line every chart carries, so a figure is never read without its context; in two
 * lines, since the SVG's width follows the (estimated) width of its longest text.
 */
export function machineLine(meta: ChartMeta): string[] {
  const quick = meta.command.includes('--quick') ? ' · quick run (short cells, 1–2 reps)' : '';
  const when = meta.startedAt.slice(0, 16).replace('T', ' ');
  return [
    `${meta.nproc} CPUs (${meta.cpu}), Node ${meta.node}, Redis ${meta.redis}`,
    `commit ${meta.gitCommit}, ${when} UTC${quick}`,
  ];
}

/** Panels per row: more wrap onto the next row. */
const COLUMNS = 3;

/**
 * A chart of one or more panels side by side (three to a row), titled, with the machine line as
 * subtitle.
 */
export function chartSpec(title: string, meta: ChartMeta, panels: readonly Panel[]): TopLevelSpec {
  const shared = colourScales(panels) === 'shared';
  // A shared legend needs one domain and one range in every panel: a contender keeps its colour
  // in panels that lack others.
  const everySeries = shared
    ? unique(panels.flatMap((panel) => panel.bars.map((b) => b.series)))
    : undefined;
  return {
    title: { text: title, subtitle: machineLine(meta), anchor: 'start', fontSize: 15, offset: 12 },
    background: 'white',
    padding: 12,
    config: {
      font: 'Arial, Helvetica, sans-serif',
      view: { stroke: null },
      concat: { spacing: 36 },
    },
    // Even one panel goes in a concat, so that its own title does not replace the chart's.
    concat: panels.map((panel) => panelSpec(panel, everySeries)),
    columns: Math.min(COLUMNS, panels.length),
    // One legend when every panel is coloured by contender; one per panel for other series.
    resolve: {
      scale: {
        color: colourScales(panels),
        x: 'independent',
        xOffset: 'independent',
        y: 'independent',
      },
    },
  } as TopLevelSpec;
}

function panelSpec(panel: Panel, everySeries?: readonly string[]) {
  const groups = unique(panel.bars.map((bar) => bar.group));
  const series = unique(panel.bars.map((bar) => bar.series));
  const domain = everySeries ?? series;
  const x = {
    field: 'group',
    type: 'nominal',
    title: panel.xTitle,
    sort: groups,
    axis: { labelAngle: 0, labelLimit: 300, labelFontSize: 11 },
  };
  const shown = panel.log ? panel.bars.filter((bar) => bar.value > 0) : panel.bars;
  // A bar on a log scale cannot start at 0: it starts at the power of ten below the least value.
  const floor = 10 ** Math.floor(Math.log10(Math.min(...shown.map((bar) => bar.value))));
  const y = {
    field: 'value',
    type: 'quantitative',
    title: panel.yTitle,
    scale: panel.log ? { type: 'log', domainMin: floor } : {},
  };
  const colour = {
    field: 'series',
    type: 'nominal',
    title: panel.legend ?? 'contender',
    sort: domain,
    scale: { domain, range: colours(domain) },
    legend: { orient: 'bottom', direction: 'vertical', labelLimit: 400 },
  };
  const encoding = { x, y, xOffset: { field: 'series', sort: series }, color: colour };
  const base = panel.log ? { y2: { datum: floor } } : {};
  const layers: object[] = [{ mark: { type: 'bar' }, encoding: { ...encoding, ...base } }];
  if (panel.labels)
    layers.push({
      mark: { type: 'text', dy: -5, fontSize: 10 },
      encoding: { ...encoding, text: { field: 'value', format: panel.labels } },
    });
  if (panel.rule !== undefined)
    layers.push({
      mark: { type: 'rule', strokeDash: [4, 4], color: '#444' },
      encoding: { y: { datum: panel.rule } },
    });
  return {
    title: { text: panel.title, fontSize: 12 },
    width: Math.max(240, 30 * shown.length, 120 * groups.length),
    height: 220,
    data: { values: shown },
    layer: layers,
  };
}

function colourScales(panels: readonly Panel[]): 'shared' | 'independent' {
  return panels.some((panel) => panel.legend) ? 'independent' : 'shared';
}

function colours(series: readonly string[]): string[] {
  let other = 0;
  return series.map((name) => COLOURS[name] ?? OTHERS[other++ % OTHERS.length]);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
