import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Chart } from './charts.js';

interface TextItem {
  readonly fontSize?: number;
  readonly fontWeight?: string | number;
}

/**
 * Without a canvas, vega estimates a text's width as 0.8 em per character, about half again
 * an Arial text's real width: titles then set the SVG far wider than what it draws. This
 * estimates by character class instead (Arial advance widths, rounded up), through the hook
 * vega keeps for renderers without a canvas.
 */
function textWidth(item: TextItem, text: unknown): number {
  const value = text == null ? '' : String(text).trim();
  const size = item.fontSize ?? 11;
  const bold = item.fontWeight === 'bold' || Number(item.fontWeight) >= 600;
  let ems = 0;
  for (const char of value) ems += charEms(char);
  return Math.ceil(ems * size * (bold ? 1.1 : 1.02));
}

function charEms(char: string): number {
  if (/[ilj.,:;'!| ·]/.test(char)) return 0.28;
  if (/[tfr()[\]/\-–]/.test(char)) return 0.34;
  if (/[mwMW%@…]/.test(char)) return 0.9;
  if (/[A-Z×]/.test(char)) return 0.7;
  return 0.57;
}

const metrics = (vega as unknown as { textMetrics: { width: typeof textWidth } }).textMetrics;
metrics.width = textWidth;

/**
 * Renders one Vega-Lite spec to SVG text. The `none` renderer builds the scene without a DOM
 * or a canvas, so this runs in plain Node.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Writes each chart as `<dir>/<file>`; returns the paths written. */
export async function writeCharts(dir: string, charts: readonly Chart[]): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const chart of charts) {
    const path = join(dir, chart.file);
    writeFileSync(path, `${await renderSvg(chart.spec)}\n`);
    written.push(path);
  }
  return written;
}
